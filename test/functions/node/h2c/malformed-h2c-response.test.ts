import { afterEach, describe, expect, it } from "vitest";
import { FrameType } from "../../../../lib/http2/frames.js";
import { HpackDecoder } from "../../../../lib/http2/hpack.js";
import { runCleanups } from "../../../lib/http2/h2-kit.js";
import { type RawPeer, rawServer } from "../../../lib/http2/raw-peer.js";
import { closeAfterEach, send, startNodeRouterOver } from "../../harness.js";
import { publishH2c } from "./h2c-kit.js";

/**
 * A backend pod speaking h2c from raw frames, so it can answer what node:http2 would never send: each request's
 * :path names the response fields it gets back (a HEADERS frame ending the stream).
 */
const RESPONSES: Record<string, string[]> = {
  "/crlf-in-value": ["x-bad", "a\r\nx-injected: 1"],
  "/uppercase-name": ["X-Upper", "1"],
  "/connection-field": ["connection", "close"],
  "/well-formed": ["x-ok", "1"],
};

/** Each HEADERS the router sends is answered with the fields its :path names, ending the stream. */
function answerByPath(peer: RawPeer): void {
  const decoder = new HpackDecoder();
  peer.onFrame = (frame) => {
    if (frame.type !== FrameType.HEADERS) return;
    const fields = decoder.decode(frame.payload);
    const path = fields[fields.indexOf(":path") + 1] ?? "";
    peer.headers(frame.streamId, [":status", "200", ...(RESPONSES[path] ?? [])], true);
  };
}

const closing = closeAfterEach();
afterEach(runCleanups);

describe("a malformed response from an h2c backend", () => {
  it.each([
    ["a CR LF inside a field value", "/crlf-in-value"],
    ["an uppercase field name", "/uppercase-name"],
    ["a connection-specific field", "/connection-field"],
  ])("is answered 502 when it holds %s, and nothing of it reaches the client", async (_, path) => {
    const { port } = await rawServer(answerByPath);
    const router = await closing(startNodeRouterOver({}));
    await publishH2c(router.store, [port], { protocol: "h2c" });

    const bad = await send(router.port, { path });
    expect(bad.status).toBe(502);
    expect(JSON.stringify(bad.headers)).not.toMatch(/x-injected|x-upper|x-bad/i);
    // The session is the backend's still: a well-formed answer on it goes through.
    const good = await send(router.port, { path: "/well-formed" });
    expect(good.status).toBe(200);
    expect(good.headers["x-ok"]).toBe("1");
  });
});

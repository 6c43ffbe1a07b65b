import { createHash, randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../../harness.js";
import { until } from "../hostile-kit.js";
import { FLAG, FRAME, frame, RawH2, requestBlock } from "./frames.js";
import { routerToBackend } from "./h2c-kit.js";

/**
 * The HTTP/1.1 client reads each backend connection into one buffer it reuses (lib/http1/connection-socket.ts)
 * and hands the HTTP/2 front views of it; the front must say it still holds one while its socket does.
 */
const closing = closeAfterEach();
const BODY_BYTES = 8 * 1024 * 1024;

/** RFC 9113 §6.5.2 and §6.9: the largest windows a client may grant, so only its socket holds the router back. */
function widestWindows(): Buffer {
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(0x4, 0);
  settings.writeUInt32BE(0x7fff_ffff, 2);
  const increment = Buffer.alloc(4);
  increment.writeUInt32BE(0x7fff_ffff - 65_535);
  return Buffer.concat([frame(FRAME.SETTINGS, 0, 0, settings), frame(FRAME.WINDOW_UPDATE, 0, 0, increment)]);
}

describe("an HTTP/2 client's answer relayed from an HTTP/1.1 backend", () => {
  it("arrives byte for byte when the client stops reading its socket while the router still writes to it", async () => {
    // Random bytes: a reused read buffer overwritten under the socket's queue cannot write the same bytes back.
    const body = randomBytes(BODY_BYTES);
    let backendSocket: Socket | undefined;
    const { router } = await routerToBackend(closing, (_req, res) => {
      backendSocket = res.socket ?? undefined;
      res.writeHead(200, { "content-length": String(body.length) });
      let at = 0;
      const pump = () => {
        while (at < body.length) {
          const chunk = body.subarray(at, at + 16 * 1024);
          at += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    const raw = await RawH2.open(router.port);
    closing(Promise.resolve({ close: async () => raw.destroy() }));
    raw.write(widestWindows());
    raw.socket.pause();
    raw.write(
      frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, requestBlock("app.example", "/big")),
    );
    await until(() => (backendSocket?.bytesWritten ?? 0) >= BODY_BYTES / 2, "half the body from the backend");
    raw.socket.resume();
    const data = () => raw.frames.filter((f) => f.type === FRAME.DATA && f.stream === 1);
    await until(() => data().some((f) => (f.flags & FLAG.END_STREAM) !== 0), "the answer's end");
    const received = createHash("sha256");
    let length = 0;
    for (const f of data()) {
      received.update(f.payload);
      length += f.payload.length;
    }
    expect(length).toBe(body.length);
    expect(received.digest("hex")).toBe(createHash("sha256").update(body).digest("hex"));
  });
});

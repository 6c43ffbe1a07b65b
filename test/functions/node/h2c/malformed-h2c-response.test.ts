import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { HpackDecoder, HpackEncoder } from "../../../../lib/http2/hpack.js";
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

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

function serveRawH2c(socket: Socket): void {
  const decoder = new HpackDecoder();
  let pending = Buffer.alloc(0);
  let preface = true;
  socket.on("error", () => undefined);
  socket.write(frame(0x4, 0, 0, Buffer.alloc(0)));
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    if (preface) {
      if (pending.length < 24) return;
      pending = pending.subarray(24);
      preface = false;
    }
    while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
      const length = pending.readUIntBE(0, 3);
      const [type, flags] = [pending[3], pending[4] ?? 0];
      const stream = pending.readUInt32BE(5) & 0x7fffffff;
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === 0x4 && (flags & 0x1) === 0) socket.write(frame(0x4, 0x1, 0, Buffer.alloc(0)));
      if (type !== 0x1) continue;
      const fields = decoder.decode(Buffer.from(payload));
      const path = fields[fields.indexOf(":path") + 1] ?? "";
      const block = new HpackEncoder().encode([":status", "200", ...(RESPONSES[path] ?? [])]);
      socket.write(frame(0x1, 0x5, stream, Buffer.from(block)));
    }
  });
}

const closing = closeAfterEach();

describe("a malformed response from an h2c backend", () => {
  it.each([
    ["a CR LF inside a field value", "/crlf-in-value"],
    ["an uppercase field name", "/uppercase-name"],
    ["a connection-specific field", "/connection-field"],
  ])("is answered 502 when it holds %s, and nothing of it reaches the client", async (_, path) => {
    const server: Server = createServer(serveRawH2c);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    await closing(
      Promise.resolve({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) }),
    );
    const { port } = server.address() as { port: number };
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

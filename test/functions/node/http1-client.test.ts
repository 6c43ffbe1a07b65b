import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NO_TRUSTED_PROXIES } from "../../../functions/core/http/trusted-proxies.js";
import { Http1Client } from "../../../functions/node/clients/http1-client.js";
import { RequestHead } from "../../../functions/node/request-head.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A response on a real connection whose client reads nothing yet, after `filler` bytes written to it: the
 * kernel's buffers are full and the rest waits in the socket. `read()` then reads the body the client gets.
 */
async function stalledResponse(
  filler: Buffer,
): Promise<{ incoming: IncomingMessage; outgoing: ServerResponse; read: () => Promise<Buffer> }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const client: Socket = connect(port, "127.0.0.1");
  cleanups.push(() => {
    client.destroy();
    server.closeAllConnections();
    server.close();
  });
  client.pause();
  client.write("GET / HTTP/1.1\r\nhost: a\r\n\r\n");
  const [incoming, outgoing] = (await once(server, "request")) as [IncomingMessage, ServerResponse];
  outgoing.writeHead(200, { "content-length": String(filler.length + 1000) });
  outgoing.write(filler);
  // Everything the client gets, once the whole body (the filler and 1,000 bytes more) came.
  const read = async () => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let headBytes = -1;
    client.resume();
    for await (const chunk of client as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (headBytes < 0) {
        const end = Buffer.concat(chunks).indexOf("\r\n\r\n");
        if (end >= 0) headBytes = end + 4;
      }
      if (headBytes >= 0 && bytes - headBytes >= filler.length + 1000) {
        return Buffer.concat(chunks, bytes).subarray(headBytes);
      }
    }
    throw new Error("the connection ended before the body did");
  };
  return { incoming, outgoing, read };
}

describe("an HTTP/1.1 client's side relaying a body", () => {
  it("relays chunks that come while the client's socket is backed up as copies, so the read buffer is read into again", async () => {
    const filler = Buffer.alloc(16 * 1024 * 1024, 0x2e);
    const { incoming, outgoing, read } = await stalledResponse(filler);
    expect(outgoing.writableLength).toBeGreaterThan(0);
    const client = new Http1Client(
      incoming,
      outgoing,
      new RequestHead(incoming.rawHeaders),
      NO_TRUSTED_PROXIES,
    );
    // One buffer, filled read after read and replaced when held, as the HTTP/1.1 client does (lib/http1/connection-socket.ts).
    let buffer = Buffer.alloc(1024);
    const held: boolean[] = [];
    for (let read = 0; read < 10; read++) {
      buffer.fill(0x61 + read);
      client.data(buffer.subarray(0, 100), true);
      held.push(client.holdsChunk());
      if (held.at(-1)) buffer = Buffer.alloc(1024);
    }
    // The first read found no backlog known yet and went as it came (held); once the backlog is known, chunks
    // go as copies of their own size and hold nothing.
    expect(held).toEqual([true, false, false, false, false, false, false, false, false, false]);
    outgoing.end();
    const pieces = Array.from({ length: 10 }, (_, read) => Buffer.alloc(100, 0x61 + read));
    expect((await read()).equals(Buffer.concat([filler, ...pieces]))).toBe(true);
  });
});

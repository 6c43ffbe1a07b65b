import { once } from "node:events";
import { type ClientHttp2Session, connect, constants } from "node:http2";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttp2Front, type Http2Front } from "../../../../functions/node/http2-front/http2-front.js";
import type { ServerStream } from "../../../../lib/http2/server-session.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The front's hooks for a test's own stream handler, with no gauge to count in. */
const handling = (onStream: (stream: ServerStream) => void) => ({
  streams: { onStream, onStreamClosed: () => undefined },
});
const OK = [":status", "200"];

/** `handled` resolves once the front handed its first stream to the handler, which calls `handle`. */
function firstStream(): { handled: Promise<void>; handle: () => void } {
  let handle: () => void = () => {};
  const handled = new Promise<void>((resolve) => {
    handle = resolve;
  });
  return { handled, handle };
}

/** A loopback listener that hands every connection to the front, as the router's listeners do. */
async function frontOn(front: Http2Front): Promise<number> {
  const listener: Server = createServer((socket) => front.accept(socket));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const address = listener.address();
  return typeof address === "object" && address ? address.port : 0;
}

function client(port: number): ClientHttp2Session {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on("error", () => undefined);
  cleanups.push(() => void session.destroy());
  return session;
}

function get(session: ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let status = 0;
    let body = "";
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      body += chunk;
    });
    stream.on("end", () => resolve({ status, body }));
    stream.on("error", reject);
  });
}

describe("createHttp2Front", () => {
  it("serves HTTP/2 requests on the connections it is handed, with the stream handler it was given", async () => {
    const front = createHttp2Front({
      drainMs: 1_000,
      idleTimeoutMs: 0,
      ...handling((stream) => {
        stream.respond(OK, false);
        stream.write(Buffer.from(`${stream.method} ${stream.path}`));
        stream.end();
      }),
    });
    cleanups.push(() => front.close());
    const session = client(await frontOn(front));
    expect(await get(session, "/hello?x=1")).toEqual({ status: 200, body: "GET /hello?x=1" });
  });

  it("sends GOAWAY on close, lets an open stream finish, and then resolves", async () => {
    const { handled, handle } = firstStream();
    const front = createHttp2Front({
      drainMs: 5_000,
      idleTimeoutMs: 0,
      ...handling((stream) => {
        handle();
        stream.respond(OK, false);
        stream.write(Buffer.from("first "));
        setTimeout(() => {
          stream.write(Buffer.from("last"));
          stream.end();
        }, 150);
      }),
    });
    const session = client(await frontOn(front));
    const goaway = once(session, "goaway");
    const answer = get(session, "/slow");
    // Closed once the stream is the front's: it must finish, not be refused.
    await handled;
    const closed = front.close();
    const [code] = await goaway;
    expect(code).toBe(0);
    expect(await answer).toEqual({ status: 200, body: "first last" });
    await closed;
  });

  it("cuts a stream still open when the drain time ends", async () => {
    const { handled, handle } = firstStream();
    const front = createHttp2Front({
      drainMs: 100,
      idleTimeoutMs: 0,
      ...handling((stream) => {
        handle();
        stream.respond(OK, false);
        stream.write(Buffer.from("never ends"));
      }),
    });
    const session = client(await frontOn(front));
    const stream = session.request({ ":path": "/forever" });
    stream.on("error", () => undefined);
    stream.resume();
    const streamClosed = once(stream, "close");
    const sessionClosed = once(session, "close");
    await handled;
    await front.close();
    await sessionClosed;
    await streamClosed;
    // Reset, so the client cannot take the cut answer for a complete one.
    expect(stream.rstCode).toBe(constants.NGHTTP2_CANCEL);
  });

  it("closes an idle session with GOAWAY after the idle timeout", async () => {
    const front = createHttp2Front({
      drainMs: 100,
      idleTimeoutMs: 100,
      ...handling((stream) => stream.respond(OK, true)),
    });
    cleanups.push(() => front.close());
    const session = client(await frontOn(front));
    expect((await get(session, "/")).status).toBe(200);
    const [code] = await once(session, "goaway");
    expect(code).toBe(0);
  });
});

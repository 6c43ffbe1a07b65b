import { request } from "node:http";
import { constants } from "node:http2";
import { describe, expect, it } from "vitest";
import { freePort } from "../../../support/redis.js";
import { closeAfterEach, type Router, send, sendRaw, startNodeRouterOver } from "../../harness.js";
import { type H2cBackend, publishH2c, startH2cBackend } from "./h2c-kit.js";

/** h2c upstreams (node/h2c/) from HTTP/1.1 clients, through startNodeRouter over a MemoryStore. */
const closing = closeAfterEach();

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const router = (config = {}) => closing(startNodeRouterOver({ config }));
const backend = (...args: Parameters<typeof startH2cBackend>): Promise<H2cBackend> =>
  closing(startH2cBackend(...args));

/** Answers with what it saw: HTTP version, method, authority, path and the body's length. */
const echo: Parameters<typeof startH2cBackend>[0] = (stream, headers) => {
  let length = 0;
  stream.on("data", (chunk: Buffer) => (length += chunk.length));
  stream.on("end", () => {
    stream.respond({ ":status": 200, "content-type": "application/json" });
    stream.end(
      JSON.stringify({
        method: headers[":method"],
        authority: headers[":authority"],
        path: headers[":path"],
        forwardedHost: headers["x-forwarded-host"],
        length,
      }),
    );
  });
};

describe("h2c upstreams from HTTP/1.1 clients", () => {
  it("speaks HTTP/2 with prior knowledge to a port whose appProtocol is kubernetes.io/h2c", async () => {
    const b = await backend(echo);
    const r: Router = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const res = await send(r.port, { method: "POST", path: "/items?x=1", body: "y".repeat(70_000) });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      method: "POST",
      authority: "app.example",
      path: "/items?x=1",
      forwardedHost: "app.example",
      length: 70_000,
    });
  });

  it("ends an HTTP/1.1 client's response when the backend's HEADERS end its stream (no DATA follows)", async () => {
    const b = await backend((stream, headers) => {
      const status = headers[":path"] === "/empty" ? 204 : 200;
      stream.respond({ ":status": status, "x-answered": "headers-only" }, { endStream: true });
    });
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    for (const path of ["/empty", "/ok"]) {
      const res = await send(r.port, { path });
      expect(res.status).toBe(path === "/empty" ? 204 : 200);
      expect(res.headers["x-answered"]).toBe("headers-only");
      expect(res.body).toBe("");
    }
  });

  it("speaks HTTP/1.1 to the same backend when its port has no appProtocol (the h2c server refuses it)", async () => {
    const b = await backend(echo);
    const r = await router();
    await publishH2c(r.store, [b.port]);
    const res = await send(r.port, { path: "/" });
    expect(res.status).toBe(502);
  });

  it("reuses one session for many requests while the peer allows their streams", async () => {
    const b = await backend(echo);
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(r.port, { path: "/" })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(b.sessions).toHaveLength(1);
  });

  it("opens another session once the peer's SETTINGS_MAX_CONCURRENT_STREAMS is reached", async () => {
    const held: (() => void)[] = [];
    const b = await backend(
      (stream) => {
        held.push(() => {
          stream.respond({ ":status": 200 });
          stream.end("ok");
        });
      },
      { maxConcurrentStreams: 2 },
    );
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    // A first request lets the router read the peer's SETTINGS before the burst.
    const first = send(r.port, { path: "/" });
    while (held.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    held.shift()?.();
    expect((await first).status).toBe(200);
    const answers = Promise.all(Array.from({ length: 6 }, () => send(r.port, { path: "/" })));
    while (held.length < 6) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const release of held.splice(0)) release();
    expect((await answers).map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(b.sessions).toHaveLength(3);
  });

  it("moves to a new session after the backend's GOAWAY, and the request in flight finishes", async () => {
    const b = await backend((stream) => {
      stream.respond({ ":status": 200 });
      stream.end("ok");
      // Graceful shutdown of the connection once this stream is answered (RFC 9113 §6.8).
      stream.session?.goaway();
    });
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    expect((await send(r.port, { path: "/" })).status).toBe(200);
    expect((await send(r.port, { path: "/" })).status).toBe(200);
    expect(b.sessions).toHaveLength(2);
  });

  it("sends a POST to another backend when the first refuses its stream (REFUSED_STREAM: not processed)", async () => {
    // Without a body, so that only the failure's kind decides (a body already read cannot be sent again).
    const refusing = await backend((stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM));
    const answering = await backend(echo);
    const r = await router();
    // Refused first: the balancer picks among both, so either order is tried until the refusing one came first.
    await publishH2c(r.store, [refusing.port, answering.port], { protocol: "h2c" });
    for (let i = 0; i < 10; i++) {
      const res = await send(r.port, { method: "POST", path: "/", body: "" });
      expect(res.status).toBe(200);
    }
    expect(refusing.sessions.length).toBeGreaterThan(0);
  });

  it("does not send a POST again after a backend reset its stream once it had it (it may have acted on it)", async () => {
    let resets = 0;
    const reset: Parameters<typeof startH2cBackend>[0] = (stream) => {
      resets++;
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    };
    const first = await backend(reset);
    const second = await backend(reset);
    const r = await router();
    await publishH2c(r.store, [first.port, second.port], { protocol: "h2c" });
    expect((await send(r.port, { method: "POST", path: "/", body: "" })).status).toBe(502);
    expect(resets).toBe(1);
  });

  it("cancels the backend's stream when the HTTP/1.1 client goes away before the answer", async () => {
    let arrived = false;
    let cancelled = false;
    const b = await backend((stream) => {
      arrived = true;
      stream.on("close", () => (cancelled = stream.rstCode === constants.NGHTTP2_CANCEL));
    });
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const client = request({ host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } });
    client.on("error", () => undefined);
    client.end();
    await until(() => arrived, "the stream at the backend");
    client.destroy();
    await until(() => cancelled, "the backend's stream reset with CANCEL");
  });

  it("sends a POST to another backend when the first refuses the connection (nothing was sent)", async () => {
    const answering = await backend(echo);
    const r = await router();
    await publishH2c(r.store, [await freePort(), answering.port], { protocol: "h2c" });
    for (let i = 0; i < 10; i++) {
      expect((await send(r.port, { method: "POST", path: "/", body: "x" })).status).toBe(200);
    }
  });

  it("answers a WebSocket upgrade to an h2c backend 502 and sends it nothing: an upgrade is HTTP/1.1's", async () => {
    const b = await backend(echo);
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const reply = await sendRaw(
      r.port,
      "GET /chat HTTP/1.1\r\nHost: app.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    expect(reply.split("\r\n")[0]).toBe("HTTP/1.1 502 Bad Gateway");
    expect(b.sessions).toHaveLength(0);
  });

  it("sends a POST again when the backend's GOAWAY says its stream was not processed (RFC 9113 §6.8)", async () => {
    let streams = 0;
    const held: (() => void)[] = [];
    const b = await backend((stream) => {
      streams++;
      if (streams === 1) {
        held.push(() => {
          stream.respond({ ":status": 200 });
          stream.end("first");
        });
        return;
      }
      if (streams === 2) {
        // The second stream arrives on the first session: refuse it by GOAWAY naming stream 1 as the last.
        stream.session?.goaway(constants.NGHTTP2_NO_ERROR, stream.id ? stream.id - 2 : 1);
        return;
      }
      stream.respond({ ":status": 200 });
      stream.end("again");
    });
    const r = await router();
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    const first = send(r.port, { method: "POST", path: "/", body: "" });
    while (held.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await send(r.port, { method: "POST", path: "/", body: "" });
    expect([second.status, second.body]).toEqual([200, "again"]);
    held.shift()?.();
    expect((await first).body).toBe("first");
    expect(b.sessions).toHaveLength(2);
  });

  it("answers 502 when no h2c backend accepts the connection, after trying each", async () => {
    const r = await router();
    await publishH2c(r.store, [await freePort(), await freePort()], { protocol: "h2c" });
    expect((await send(r.port, { method: "POST", path: "/", body: "x" })).status).toBe(502);
  });

  it("cuts the backend's stream when its answer does not come within the try timeout (504)", async () => {
    let closed = false;
    const b = await backend((stream) => {
      stream.on("close", () => (closed = true));
    });
    const r = await router({ tryTimeoutMs: 200, totalTimeoutMs: 300, retries: 0 });
    await publishH2c(r.store, [b.port], { protocol: "h2c" });
    expect((await send(r.port, { path: "/" })).status).toBe(504);
    const deadline = Date.now() + 5_000;
    while (!closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(true);
  });
});

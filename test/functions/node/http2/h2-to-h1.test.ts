import { createHash } from "node:crypto";
import { once } from "node:events";
import { request as http1Request } from "node:http";
import { createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../../fixtures.js";
import { closeAfterEach, type Router, startBackend, startNodeRouterOver } from "../../harness.js";
import { until } from "../hostile-kit.js";
import { h2Request, h2Session } from "./h2-client.js";

/**
 * HTTP/2 clients' requests to HTTP/1.1 backends go through the one exchange (functions/node/exchange.ts): the
 * backend reads the very head an HTTP/1.1 client's request gets (the web path's client would add its own
 * Connection field), and the backend's connection-specific fields never reach the HTTP/2 client.
 */
const closing = closeAfterEach();

const ANSWER =
  "HTTP/1.1 200 OK\r\nconnection: keep-alive, x-hop\r\nkeep-alive: timeout=5\r\nproxy-connection: keep-alive\r\n" +
  "x-hop: for this hop\r\nx-kept: yes\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n" +
  "transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";

/** A raw HTTP/1.1 backend that records each request head as it came and answers every one with ANSWER. */
async function startRawBackend() {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let held = "";
    socket.on("data", (chunk: Buffer) => {
      held += chunk.toString("latin1");
      let end = held.indexOf("\r\n\r\n");
      while (end !== -1) {
        const head = held.slice(0, end);
        held = held.slice(end + 4);
        // A chunked request body's last chunk ends in CRLF CRLF too: only request lines open a head.
        if (/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(head)) {
          heads.push(head);
          socket.write(ANSWER);
        }
        end = held.indexOf("\r\n\r\n");
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    heads,
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function routerTo(port: number): Promise<Router> {
  const router = await closing(startNodeRouterOver({ config: { retries: 0 } }));
  await publish(router.store, serviceRecord({ cluster: "a", ipv4: [{ ip: "127.0.0.1", port }] }));
  return router;
}

function http1Get(port: number, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http1Request({ host: "127.0.0.1", port, path: "/native?q=1", headers, agent: false });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(String(res.statusCode)));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HTTP/2 requests to HTTP/1.1 backends", () => {
  it("reach the backend with the same head as the same request over HTTP/1.1, one Cookie field and no pseudo-header", async () => {
    const backend = await closing(startRawBackend());
    const router = await routerTo(backend.port);
    // The same trace context too: a request without one would start a new trace each time.
    const fields = {
      "x-request-id": "same-request-1",
      "x-custom": "1",
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    };
    expect(await http1Get(router.port, { host: "app.example", ...fields, cookie: "a=1; b=2" })).toBe("200");
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const answer = await h2Request(session, {
      ":path": "/native?q=1",
      ":authority": "app.example",
      ...fields,
      cookie: ["a=1", "b=2"],
    });
    expect(answer.status).toBe(200);
    expect(backend.heads).toHaveLength(2);
    const [overHttp1, overHttp2] = backend.heads;
    expect(overHttp2).toBe(overHttp1);
    expect(overHttp2).toContain("\r\ncookie: a=1; b=2");
  });

  it("answer the HTTP/2 client without the backend's connection-specific fields (RFC 9113 §8.2.2)", async () => {
    const backend = await closing(startRawBackend());
    const router = await routerTo(backend.port);
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const answer = await h2Request(
      session,
      { ":method": "POST", ":path": "/", ":authority": "app.example" },
      "a body",
    );
    expect(answer).toMatchObject({ status: 200, body: "hello" });
    for (const name of ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "x-hop"]) {
      expect(answer.headers[name]).toBeUndefined();
    }
    expect(answer.headers["x-kept"]).toBe("yes");
    expect(answer.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    // The body went chunked: an HTTP/2 request declares no length unless it sends a Content-Length.
    expect(backend.heads[0]).toMatch(/^POST \/ HTTP\/1\.1\r\n/);
    expect(backend.heads[0]).toContain("\r\ntransfer-encoding: chunked");
  });

  it("answer 502 to an HTTP/2 client when the backend applied a transfer coding (HTTP/2 has none)", async () => {
    const backend = await closing(
      startBackend("127.0.0.1", (_req, res) => {
        res.writeHead(200, { "transfer-encoding": "gzip, chunked" });
        res.end("not really gzip");
      }),
    );
    const router = await routerTo(backend.port);
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const answer = await h2Request(session, { ":path": "/", ":authority": "app.example" });
    expect(answer.status).toBe(502);
  });

  it("stop reading the backend while the HTTP/2 client takes nothing, and relay every byte once it reads", async () => {
    const total = 48 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) % 251;
    let sent = 0;
    let flushedWhilePaused = -1;
    let backendSocket: Socket | undefined;
    const backend = await closing(
      startBackend("127.0.0.1", (_req, res) => {
        backendSocket = res.socket ?? undefined;
        res.writeHead(200, { "content-length": String(total) });
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        pump();
      }),
    );
    const router = await routerTo(backend.port);
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const stream = session.request({ ":path": "/big", ":authority": "app.example" });
    stream.pause();
    await once(stream, "response");
    await until(() => (backendSocket?.bytesWritten ?? 0) > 0, "the backend's first bytes");
    await new Promise((resolve) => setTimeout(resolve, 500));
    flushedWhilePaused = backendSocket?.bytesWritten ?? 0;
    const hash = createHash("sha256");
    let received = 0;
    stream.on("data", (data: Buffer) => {
      received += data.length;
      hash.update(data);
    });
    stream.resume();
    await once(stream, "end");
    // Loopback socket buffers hold some megabytes; without back-pressure the router would have read it all.
    expect(flushedWhilePaused).toBeLessThan(total / 2);
    expect(received).toBe(total);
    const expected = createHash("sha256");
    for (let i = 0; i < total / chunk.length; i++) expected.update(chunk);
    expect(hash.digest("hex")).toBe(expected.digest("hex"));
  });

  it("go to another backend when one refuses the connection, and answer 504 when no head comes in time", async () => {
    const gone = await startRawBackend();
    await gone.close();
    const live = await closing(startRawBackend());
    const router = await closing(startNodeRouterOver({ config: { retries: 2 } }));
    const endpoints = [
      { ip: "127.0.0.1", port: gone.port },
      { ip: "127.0.0.1", port: live.port },
    ];
    await publish(router.store, serviceRecord({ cluster: "a", ipv4: endpoints }));
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    for (let i = 0; i < 6; i++) {
      const answer = await h2Request(session, { ":path": `/${i}`, ":authority": "app.example" });
      expect(answer).toMatchObject({ status: 200, body: "hello" });
    }

    const silent = await closing(startBackend("127.0.0.1", () => undefined));
    const slow = await closing(
      startNodeRouterOver({ config: { tryTimeoutMs: 200, totalTimeoutMs: 300, retries: 0 } }),
    );
    await publish(
      slow.store,
      serviceRecord({ cluster: "a", ipv4: [{ ip: "127.0.0.1", port: silent.port }] }),
    );
    const toSlow = h2Session(slow.port);
    closing(Promise.resolve({ close: async () => void toSlow.destroy() }));
    const timedOut = await h2Request(toSlow, { ":path": "/", ":authority": "app.example" });
    expect(timedOut.status).toBe(504);
  });
});

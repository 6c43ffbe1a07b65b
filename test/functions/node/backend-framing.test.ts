import { createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../fixtures.js";
import { closeAfterEach, type RouterOptions, send, startBackend, startNodeRouterOver } from "../harness.js";
import { metric, rawExchange, statusLineOf } from "./hostile-kit.js";

/**
 * The Node proxy's own client between a client and a backend, in bytes: how the framing of each side is relayed
 * (RFC 9112 §6), and what a backend closing a kept-alive connection as it is reused costs (nothing).
 */
const closing = closeAfterEach();

interface ScriptedBackend {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** Every request head read, as received. */
  readonly heads: string[];
  close(): Promise<void>;
}

/** A backend on 127.0.0.1 that calls `answer` with each request head and its number on its connection (from 1). */
async function scriptedBackend(
  answer: (socket: Socket, head: string, nth: number) => void,
): Promise<ScriptedBackend> {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let pending = "";
    let nth = 0;
    socket.on("data", (chunk: Buffer) => {
      pending += chunk.toString("latin1");
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end + 4);
        pending = pending.slice(end + 4);
        heads.push(head);
        answer(socket, head, ++nth);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    host: "127.0.0.1",
    port: typeof address === "object" && address ? address.port : 0,
    heads,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A backend that answers every request with `reply`. */
const answering = (reply: string) => scriptedBackend((socket) => socket.write(reply, "latin1"));

async function routerTo(backend: ScriptedBackend, options: RouterOptions = {}) {
  const router = await closing(startNodeRouterOver(options));
  await publish(
    router.store,
    serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }),
  );
  return router;
}

const GET = "GET / HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n";
const OK = "HTTP/1.1 200 OK\r\n";

/** The head of a raw reply, lower-cased, and what follows it. */
function split(reply: Buffer): { head: string; body: string } {
  const text = reply.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  return { head: text.slice(0, end + 2).toLowerCase(), body: text.slice(end + 4) };
}

describe("the Node proxy's backend connections", () => {
  it("answers a GET when its one backend closed the kept-alive connection as it was reused, blaming it for nothing", async () => {
    const b = await closing(
      scriptedBackend((socket, _head, nth) => {
        if (nth === 1) socket.write(`${OK}content-length: 2\r\n\r\nok`);
        else socket.end();
      }),
    );
    const r = await routerTo(b, { config: { retries: 0 } });
    for (let i = 0; i < 4; i++) expect(await send(r.port, {})).toMatchObject({ status: 200, body: "ok" });
    expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="transport"}')).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_ejections_total")).toBe(0);
  });

  it.each(["PUT", "DELETE"])(
    "answers every %s with a body when its one backend closes each kept-alive connection as it is reused, the body sent whole again",
    async (method) => {
      // Answers the first request of each connection with the body it read; closes the connection on the next.
      const served = new WeakSet<object>();
      const b = await closing(
        startBackend("127.0.0.1", (req, res) => {
          if (served.has(req.socket)) {
            req.socket.destroy();
            return;
          }
          served.add(req.socket);
          let body = "";
          req.setEncoding("latin1");
          req.on("data", (chunk: string) => (body += chunk));
          req.on("end", () => res.end(`${req.method} ${body}`));
        }),
      );
      const r = await routerTo({ ...b, host: "127.0.0.1", heads: [] }, { config: { retries: 0 } });
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await send(r.port, { method, headers: { "content-length": "5" }, body: "hello" });
        answers.push(`${res.status} ${res.body}`);
      }
      expect(answers).toEqual(Array(6).fill(`200 ${method} hello`));
      expect(b.seen.length).toBe(11);
    },
  );

  it("answers 502 to a PUT whose body outgrew the 64 KiB it keeps, when its kept-alive connection was closed as it was reused", async () => {
    const served = new WeakSet<object>();
    const b = await closing(
      startBackend("127.0.0.1", (req, res) => {
        // Read whole, so the router has read past what it keeps before the connection goes.
        req.resume();
        if (served.has(req.socket)) return void req.on("end", () => req.socket.destroy());
        served.add(req.socket);
        req.on("end", () => res.end("ok"));
      }),
    );
    const r = await routerTo({ ...b, host: "127.0.0.1", heads: [] }, { config: { retries: 0 } });
    const body = "x".repeat(64 * 1024 + 1);
    const headers = { "content-length": String(body.length) };
    expect((await send(r.port, { method: "PUT", headers, body })).status).toBe(200);
    expect((await send(r.port, { method: "PUT", headers, body })).status).toBe(502);
  });

  it("never sends a POST again after its one backend closed the kept-alive connection as it was reused", async () => {
    const b = await closing(
      scriptedBackend((socket, _head, nth) => {
        if (nth === 1) socket.write(`${OK}content-length: 2\r\n\r\nok`);
        else socket.end();
      }),
    );
    const r = await routerTo(b, { config: { retries: 0 } });
    expect((await send(r.port, { method: "POST", body: "hello" })).status).toBe(200);
    expect((await send(r.port, { method: "POST", body: "hello" })).status).toBe(502);
    expect(b.heads.filter((head) => head.includes("POST / HTTP/1.1\r\n"))).toHaveLength(2);
  });

  it.each([
    [
      "chunked with another coding before it",
      "transfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    ],
    ["delimited by the close with a coding", "transfer-encoding: gzip\r\nconnection: close\r\n\r\nabc"],
  ])("relays a body %s with its coding, chunked last", async (_what, rest) => {
    const b = await closing(scriptedBackend((socket) => socket.end(`${OK}${rest}`, "latin1")));
    const r = await routerTo(b);
    const { head, body } = split(await rawExchange(r.port, GET));
    expect(head).toContain("\r\ntransfer-encoding: gzip, chunked\r\n");
    expect(body).toBe("3\r\nabc\r\n0\r\n\r\n");
  });

  it.each([
    [
      "a body chunked before another coding",
      `${OK}transfer-encoding: chunked, identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
    ],
    ["a status code past 599", "HTTP/1.1 600 Custom\r\ncontent-length: 2\r\n\r\nok"],
  ])("answers 502 to %s", async (_what, reply) => {
    const b = await closing(scriptedBackend((socket) => socket.end(reply, "latin1")));
    const r = await routerTo(b, { config: { retries: 0 } });
    expect((await send(r.port, {})).status).toBe(502);
  });

  it("answers 502 to a transfer-coded body for a client that speaks HTTP/1.0", async () => {
    const b = await closing(answering(`${OK}transfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`));
    const r = await routerTo(b, { config: { retries: 0 } });
    const reply = await rawExchange(r.port, "GET / HTTP/1.0\r\nhost: app.example\r\n\r\n");
    expect(statusLineOf(reply)).toMatch(/^HTTP\/1\.1 502 /);
  });

  it("relays a 204 without its Content-Length and a 304 with it (RFC 9110 §8.6)", async () => {
    const b = await closing(
      scriptedBackend((socket, head) =>
        socket.write(
          head.startsWith("GET /204 ")
            ? "HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n"
            : "HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n",
        ),
      ),
    );
    const r = await routerTo(b);
    const noContent = split(await rawExchange(r.port, GET.replace("GET / ", "GET /204 ")));
    expect(noContent.head).toMatch(/^http\/1\.1 204 /);
    expect(noContent.head).not.toContain("content-length");
    const notModified = split(await rawExchange(r.port, GET.replace("GET / ", "GET /304 ")));
    expect(notModified.head).toContain("\r\ncontent-length: 5\r\n");
  });

  it("relays a request body chunked after another coding with that coding", async () => {
    const b = await closing(answering(`${OK}content-length: 2\r\n\r\nok`));
    const r = await routerTo(b);
    const request =
      "POST / HTTP/1.1\r\nhost: app.example\r\ntransfer-encoding: gzip, chunked\r\nconnection: close\r\n\r\n" +
      "3\r\nabc\r\n0\r\n\r\n";
    expect(statusLineOf(await rawExchange(r.port, request))).toBe("HTTP/1.1 200 OK");
    expect(b.heads[0]?.toLowerCase()).toContain("\r\ntransfer-encoding: gzip, chunked\r\n");
  });

  it("refuses a request whose Transfer-Encoding does not end in chunked, sending nothing on (RFC 9112 §6.3)", async () => {
    const b = await closing(answering(`${OK}content-length: 2\r\n\r\nok`));
    const r = await routerTo(b);
    const request =
      "POST / HTTP/1.1\r\nhost: app.example\r\ntransfer-encoding: chunked, identity\r\nconnection: close\r\n\r\n" +
      "3\r\nabc\r\n0\r\n\r\n";
    expect(statusLineOf(await rawExchange(r.port, request))).toMatch(/^HTTP\/1\.1 400 /);
    expect(b.heads).toEqual([]);
  });

  it("cuts the client's response short when the backend resets a body delimited by the close", async () => {
    const b = await closing(
      scriptedBackend((socket) =>
        socket.write(`${OK}x-a: 1\r\n\r\nhello`, () => setTimeout(() => socket.resetAndDestroy(), 20)),
      ),
    );
    const r = await routerTo(b);
    const { head, body } = split(await rawExchange(r.port, GET));
    expect(head).toMatch(/^http\/1\.1 200 /);
    expect(body).toContain("hello");
    expect(body).not.toMatch(/0\r\n\r\n$/);
  });
});

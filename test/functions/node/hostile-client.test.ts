import { request } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { parseTrustedProxies } from "../../../functions/core/http/trusted-proxies.js";
import { publish, serviceRecord } from "../fixtures.js";
import {
  type Backend,
  closeAfterEach,
  ROUTER_KINDS,
  type Router,
  send,
  startBackend,
  startRouterOf,
} from "../harness.js";
import { metric, rawBackend, rawExchange, statusLineOf, until } from "./hostile-kit.js";

/** Clients that send what a browser would not: raw bytes on a socket to the router on 127.0.0.1. */
const closing = closeAfterEach();

async function setUp(
  kind: (typeof ROUTER_KINDS)[number],
  handler?: Parameters<typeof startBackend>[1],
  options: Parameters<typeof startRouterOf>[1] = {},
) {
  const b: Backend = await closing(startBackend("127.0.0.1", handler));
  const r: Router = await closing(startRouterOf(kind, options));
  await publish(r.store, serviceRecord({ cluster: "a", ipv4: [{ ip: b.host, port: b.port }] }));
  return { b, r };
}

const NODE = "node fast path (startNodeRouter)";

const parsedLoopback = parseTrustedProxies("127.0.0.1");
if (!parsedLoopback.ok) throw new Error(parsedLoopback.error);
const trustedLoopback = parsedLoopback.value;

describe("the scheme forwarded is the connection's, never the request target's", () => {
  it("sends X-Forwarded-Proto and Forwarded proto=http for `GET https://...` over plain HTTP", async () => {
    const { b, r } = await setUp(NODE);
    const reply = await rawExchange(
      r.port,
      "GET https://app.example/path HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n",
    );
    expect(statusLineOf(reply)).toBe("HTTP/1.1 200 OK");
    expect(b.seen[0]?.headers["x-forwarded-proto"]).toBe("http");
    expect(b.seen[0]?.headers.forwarded).toBe("for=127.0.0.1;host=app.example;proto=http");
  });

  it("does so on upgrades too", async () => {
    const b = await closing(rawBackend(Buffer.from("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")));
    const r: Router = await closing(startRouterOf(NODE));
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [{ ip: b.host, port: b.port }] }));
    await rawExchange(
      r.port,
      "GET https://app.example/ws HTTP/1.1\r\nhost: app.example\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
    );
    expect(b.heads[0]).toMatch(/\r\nx-forwarded-proto: http\r\n/);
    expect(b.heads[0]).toMatch(/\r\nforwarded: for=127\.0\.0\.1;host=app\.example;proto=http(\r\n|$)/);
  });
});

describe.each(ROUTER_KINDS)("%s: a client's Forwarded", (kind) => {
  it.each([
    ["an unclosed quote", 'for="6.6.6.6', undefined],
    ["an escaped closing quote", 'for="6.6.6.6\\"', undefined],
    ["a well-formed element", 'for="[2001:db8::1]";proto=https', 'for="[2001:db8::1]";proto=https'],
  ])("from a trusted proxy with %s never swallows the router's own element", async (_what, sent, kept) => {
    // Only a trusted proxy's Forwarded is kept at all (TRUSTED_PROXIES); anyone else's is replaced.
    const { b, r } = await setUp(kind, undefined, { config: { trustedProxies: trustedLoopback } });
    await send(r.port, { headers: { forwarded: sent } });
    const own = "for=127.0.0.1;host=app.example;proto=http";
    expect(b.seen[0]?.headers.forwarded).toBe(kept === undefined ? own : `${kept}, ${own}`);
  });
});

/** A raw request: Host, then `count` header lines of the form `a:1`, then Content-Length and a 5-byte body. */
function manyHeaders(count: number): string {
  return `POST /upload HTTP/1.1\r\nhost: app.example\r\n${"a:1\r\n".repeat(count)}content-length: 5\r\nconnection: close\r\n\r\nhello`;
}

describe("node fast path: request heads Node reads only in part, or reads two ways", () => {
  it("refuses more header fields than it reads with 431, never forwarding the body as empty", async () => {
    const { b, r } = await setUp(NODE);
    const reply = await rawExchange(r.port, manyHeaders(2_100));
    expect(statusLineOf(reply)).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(reply.toString("latin1")).toMatch(/\r\nconnection: close\r\n/i);
    expect(b.seen).toHaveLength(0);
  });

  it("forwards the body of a request with as many fields as it reads", async () => {
    const { b, r } = await setUp(NODE, (req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => res.end(`got ${body}`));
    });
    const reply = await rawExchange(r.port, manyHeaders(1_997));
    expect(statusLineOf(reply)).toBe("HTTP/1.1 200 OK");
    expect(reply.toString("latin1")).toMatch(/got hello$/);
    expect(b.seen).toHaveLength(1);
  });

  it("refuses two Host fields with 400 (RFC 9112 §3.2), upgrade or not", async () => {
    const { b, r } = await setUp(NODE);
    const plain = await rawExchange(
      r.port,
      "GET / HTTP/1.1\r\nhost: app.example\r\nhost: other.example\r\nconnection: close\r\n\r\n",
    );
    const upgrade = await rawExchange(
      r.port,
      "GET / HTTP/1.1\r\nhost: app.example\r\nhost: other.example\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
    );
    expect([statusLineOf(plain), statusLineOf(upgrade)]).toEqual([
      "HTTP/1.1 400 Bad Request",
      "HTTP/1.1 400 Bad Request",
    ]);
    expect(b.seen).toHaveLength(0);
  });
});

describe.each(ROUTER_KINDS)("%s: a wildcard route", (kind) => {
  it.each([
    ['a"b.wild.test', 400],
    ["a`b.wild.test", 400],
    ["a_b.wild.test", 404],
    ["-a.wild.test", 404],
    ["*.wild.test", 404],
    ["a.wild.test", 200],
    ["A.Wild.Test.", 200],
  ])("answers Host %s with %s", async (host, status) => {
    const b: Backend = await closing(startBackend("127.0.0.1"));
    const r: Router = await closing(startRouterOf(kind));
    const ipv4 = [{ ip: b.host, port: b.port }];
    await publish(r.store, serviceRecord({ cluster: "a", hosts: ["*.wild.test"], ipv4 }));
    const reply = await rawExchange(r.port, `GET / HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
    expect(statusLineOf(reply)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(b.seen).toHaveLength(status === 200 ? 1 : 0);
  });
});

describe.each(ROUTER_KINDS)("%s: a client that goes away before the response head", (kind) => {
  it("counts as client_closed, never as a 5xx, and nothing stays in flight or is blamed on the backend", async () => {
    let arrived = 0;
    const { r } = await setUp(kind, () => {
      arrived++;
    });
    for (let i = 0; i < 3; i++) {
      const client = request({
        host: "127.0.0.1",
        port: r.port,
        path: "/",
        headers: { host: "app.example" },
      });
      client.on("error", () => undefined);
      client.end();
      await until(() => arrived === i + 1, "the request at the backend");
      client.destroy();
    }
    await until(
      async () => (await metric(r.adminPort, 'edgeslice_requests_total{class="client_closed"}')) === 3,
      "3 closed",
    );
    expect(await metric(r.adminPort, 'edgeslice_requests_total{class="5xx"}')).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_ejected_backends")).toBe(0);
  });

  it("does so while it was still sending its body", async () => {
    const { b, r } = await setUp(kind, (req) => req.resume());
    for (let i = 0; i < 3; i++) {
      const socket = connect(r.port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.write("POST / HTTP/1.1\r\nhost: app.example\r\ncontent-length: 100\r\n\r\npartial");
      await until(() => b.seen.length === i + 1, "the request at the backend");
      socket.destroy();
    }
    await until(
      async () => (await metric(r.adminPort, 'edgeslice_requests_total{class="client_closed"}')) === 3,
      "3 closed",
    );
    expect(await metric(r.adminPort, 'edgeslice_requests_total{class="5xx"}')).toBe(0);
    expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="transport"}')).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
    expect(await metric(r.adminPort, "edgeslice_ejected_backends")).toBe(0);
  });
});

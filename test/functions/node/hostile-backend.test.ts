import { describe, expect, it } from "vitest";
import { publish, serviceRecord } from "../fixtures.js";
import {
  closeAfterEach,
  ROUTER_KINDS,
  type Router,
  type RouterOptions,
  send,
  startRouterOf,
} from "../harness.js";
import { metric, type RawBackend, rawBackend, rawExchange, statusLineOf, until } from "./hostile-kit.js";

/**
 * Backends that answer with bytes a well-behaved server would not send. Whatever they send, the client gets
 * the answer relayed (or a 502) and every counter settles: nothing stays in flight to skew p2c.
 */
const closing = closeAfterEach();

const utf8Reason = (status: string, body = "hi") =>
  Buffer.concat([
    Buffer.from(`HTTP/1.1 ${status} `, "latin1"),
    Buffer.from("OK ✓ — ünïcode", "utf8"),
    Buffer.from(`\r\ncontent-length: ${body.length}\r\nx-app: 1\r\n\r\n${body}`, "latin1"),
  ]);

async function routerTo(
  kind: (typeof ROUTER_KINDS)[number],
  backend: RawBackend,
  options: RouterOptions = {},
) {
  const r: Router = await closing(startRouterOf(kind, options));
  await publish(r.store, serviceRecord({ cluster: "a", ipv4: [{ ip: backend.host, port: backend.port }] }));
  return r;
}

describe.each(ROUTER_KINDS)("%s", (kind) => {
  it("relays an answer whose reason phrase is UTF-8 past Latin-1, and nothing stays in flight", async () => {
    const b = await closing(rawBackend(utf8Reason("200")));
    const r = await routerTo(kind, b);
    for (let i = 0; i < 4; i++) {
      const res = await send(r.port, { path: `/r${i}` });
      expect([res.status, res.body, res.headers["x-app"]]).toEqual([200, "hi", "1"]);
    }
    await until(
      async () => (await metric(r.adminPort, "edgeslice_in_flight_requests")) === 0,
      "in flight to settle",
    );
    expect(await metric(r.adminPort, 'edgeslice_requests_total{class="5xx"}')).toBe(0);
    expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="transport"}')).toBe(0);
  });

  it("relays such an answer to HEAD too (Node sends HEAD on the web path)", async () => {
    const b = await closing(rawBackend(utf8Reason("200", "")));
    const r = await routerTo(kind, b);
    const res = await send(r.port, { method: "HEAD" });
    expect([res.status, res.headers["x-app"]]).toEqual([200, "1"]);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
  });

  it("relays such an answer for a 503 too, counted as the backend's answer", async () => {
    const b = await closing(rawBackend(utf8Reason("503", "no")));
    const r = await routerTo(kind, b, { config: { retries: 0 } });
    const res = await send(r.port, {});
    expect([res.status, res.body]).toEqual([503, "no"]);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
  });
});

describe("node fast path (raw client)", () => {
  const kind = "node fast path (startNodeRouter)";

  it("writes the status line with the status's own phrase when the backend's cannot go out", async () => {
    const b = await closing(rawBackend(utf8Reason("200")));
    const r = await routerTo(kind, b);
    const reply = await rawExchange(
      r.port,
      "GET / HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n",
    );
    expect(statusLineOf(reply)).toBe("HTTP/1.1 200 OK");
  });

  it("relays Latin-1 and UTF-8 bytes of header values byte for byte", async () => {
    const value = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xe2, 0x9c, 0x93]);
    const b = await closing(
      rawBackend(
        Buffer.concat([
          Buffer.from("HTTP/1.1 200 OK\r\nx-raw: ", "latin1"),
          value,
          Buffer.from("\r\ncontent-length: 0\r\n\r\n", "latin1"),
        ]),
      ),
    );
    const r = await routerTo(kind, b);
    const reply = await rawExchange(
      r.port,
      "GET / HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n",
    );
    expect(reply.includes(Buffer.concat([Buffer.from("x-raw: "), value, Buffer.from("\r\n")]))).toBe(true);
  });

  it("relays header fields named __proto__ as fields, whatever their number", async () => {
    const b = await closing(
      rawBackend(
        Buffer.from(
          "HTTP/1.1 200 OK\r\n__proto__: a\r\n__proto__: b\r\nx-after: 1\r\ncontent-length: 2\r\n\r\nok",
        ),
      ),
    );
    const r = await routerTo(kind, b);
    const res = await send(r.port, {});
    expect([res.status, res.body, res.headers["x-after"]]).toEqual([200, "ok", "1"]);
    expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
  });

  it.each([
    [
      "Content-Length next to Transfer-Encoding",
      "content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ["two Content-Lengths that differ", "content-length: 2\r\ncontent-length: 3\r\n\r\nokk"],
    ["an obs-folded field", "x-a: 1\r\n folded\r\ncontent-length: 2\r\n\r\nok"],
  ])(
    "answers 502 to an answer with %s, counted as a transport error, and serves the next on a new connection",
    async (_what, rest) => {
      let answered = 0;
      const b = await closing(
        rawBackend(() =>
          Buffer.from(
            answered++ === 0
              ? `HTTP/1.1 200 OK\r\n${rest}`
              : "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
            "latin1",
          ),
        ),
      );
      const r = await routerTo(kind, b, { config: { retries: 0 } });
      expect((await send(r.port, {})).status).toBe(502);
      expect(await send(r.port, {})).toMatchObject({ status: 200, body: "ok" });
      expect(await metric(r.adminPort, 'edgeslice_upstream_errors_total{kind="transport"}')).toBe(1);
      expect(await metric(r.adminPort, "edgeslice_in_flight_requests")).toBe(0);
    },
  );

  it("relays an upgrade answer whose reason phrase is UTF-8, and closes", async () => {
    const b = await closing(rawBackend(utf8Reason("403", "no")));
    const r = await routerTo(kind, b);
    const reply = await rawExchange(
      r.port,
      "GET /ws HTTP/1.1\r\nhost: app.example\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
    );
    expect(statusLineOf(reply)).toMatch(/^HTTP\/1\.1 403 /);
    expect(reply.toString("latin1")).toMatch(/\r\n\r\nno$/);
  });
});

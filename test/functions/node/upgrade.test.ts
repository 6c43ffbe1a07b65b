import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../../support/redis.js";
import { endpointOn, ep, publish, serviceRecord } from "../fixtures.js";
import { closeServer, listen } from "../harness.js";
import { CLIENT_KEY, metricsOf, upgradeTestKit, websocketAccept } from "./upgrade-peers.js";

/**
 * HTTP/1.1 Upgrade (WebSocket) through the Node router (node/upgrade.ts) over real loopback sockets: which
 * backend it reaches, what it sends there, and what the client gets when it cannot be proxied.
 */
const { closing, backend, router, client } = upgradeTestKit();

describe.each(["127.0.0.1", "::1"] as const)("an upgrade to a backend on %s", (family) => {
  it("reaches the backend listed for its Host and carries bytes both ways, those sent right after the head included", async () => {
    const chat = await backend(family, "chat");
    const other = await backend(family, "other");
    const r = await router({ config: { ipFamily: family === "::1" ? "IPv6" : "IPv4" } });
    await publish(r.store, serviceRecord({ cluster: "a", hosts: ["chat.example"], ...endpointOn(chat) }));
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        service: "default/other",
        hosts: ["other.example"],
        ...endpointOn(other),
      }),
    );

    const c = client(r.port, { host: "chat.example", path: "/room/1?x=y", early: "early-bytes;" });
    const head = await c.head();
    expect(head.status).toBe(101);
    expect(head.headers["sec-websocket-accept"]).toBe(websocketAccept(CLIENT_KEY));
    expect([head.headers.upgrade, head.headers.connection?.toLowerCase()]).toEqual(["websocket", "upgrade"]);
    await c.until(
      (t) => t.endsWith("hello from chat;early-bytes;"),
      "the greeting and the echoed early bytes",
    );
    c.socket.write("ping;");
    await c.until((t) => t.endsWith("early-bytes;ping;"), "the echo of a later write");

    expect(chat.seen.map((s) => [s.method, s.url, s.headers.host])).toEqual([
      ["GET", "/room/1?x=y", "chat.example"],
    ]);
    expect(other.connections()).toBe(0);
  });
});

describe("an upgrade through the Node router", () => {
  it("for a host no Service exposes gets 404 no_route and never touches any backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", hosts: ["app.example"], ...endpointOn(canary) }));

    const c = client(r.port, { host: "unknown.example" });
    const head = await c.head();
    await c.closed;

    expect([
      head.status,
      head.headers["content-type"],
      JSON.parse(c.text().split("\r\n\r\n")[1] ?? ""),
    ]).toEqual([404, "application/json", { error: "no_route", requestId: expect.any(String) }]);
    expect(canary.connections()).toBe(0);
  });

  it("to the reserved admin prefix gets 404 no_route and never reaches a backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(canary) }));

    for (const path of ["/_edgeslice/metrics", "/%5Fedgeslice/healthz"]) {
      const c = client(r.port, { path });
      expect((await c.head()).status).toBe(404);
      await c.closed;
    }
    expect(canary.connections()).toBe(0);
  });

  it("for a Service without endpoints gets 503 no_endpoints with Retry-After", async () => {
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a" }));

    const c = client(r.port);
    const head = await c.head();
    await c.closed;

    expect([head.status, head.headers["retry-after"], head.rest]).toEqual([
      503,
      "5",
      expect.stringMatching(/^\{"error":"no_endpoints","requestId":"[\w-]+"\}$/),
    ]);
  });

  it("tries the next backend when the first refuses the connection, and counts the connect failure", async () => {
    const live = await backend("127.0.0.1", "live");
    const dead = ep("127.0.0.1", await freePort());
    const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, ep(live.host, live.port)] }));

    const c = client(r.port);
    expect((await c.head()).status).toBe(101);
    await c.until((t) => t.endsWith("hello from live;"), "the live backend's greeting");

    const metrics = await metricsOf(r.adminPort);
    expect(metrics).toContain('edgeslice_upstream_errors_total{kind="connect"} 1');
    expect(metrics).toContain("edgeslice_retries_total 1");
  });

  it("gets 502 bad_gateway when every backend refuses the connection", async () => {
    const r = await router({ ejection: { consecutiveFailures: 1_000 } });
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ipv4: [ep("127.0.0.1", await freePort()), ep("127.0.0.1", await freePort())],
      }),
    );

    const c = client(r.port);
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([
      502,
      expect.stringMatching(/^\{"error":"bad_gateway","requestId":"[\w-]+"\}$/),
    ]);
  });

  it("gets 504 upstream_timeout from a backend that accepts but never answers, and is not retried elsewhere", async () => {
    const silent = createServer();
    const held: Socket[] = [];
    silent.on("connection", (socket: Socket) => {
      held.push(socket);
    });
    // Takes the upgrade and says nothing: no 101, no refusal.
    silent.on("upgrade", () => undefined);
    await listen(silent, "127.0.0.1");
    void closing(
      Promise.resolve({
        close: () => {
          for (const socket of held) socket.destroy();
          return closeServer(silent);
        },
      }),
    );
    const spare = await backend("127.0.0.1", "spare");
    // Long enough that a stalled event loop cannot pass the connect itself for a timeout (which may be retried).
    const r = await router({ random: () => 0, config: { tryTimeoutMs: 1_000 } });
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ipv4: [ep("127.0.0.1", (silent.address() as AddressInfo).port), ep(spare.host, spare.port)],
      }),
    );

    const c = client(r.port);
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([
      504,
      expect.stringMatching(/^\{"error":"upstream_timeout","requestId":"[\w-]+"\}$/),
    ]);
    expect([held.length, spare.connections()]).toEqual([1, 0]);
  });

  it("replaces an untrusted client's X-Forwarded-For, sets Forwarded, keeps Host, and strips hop-by-hop fields other than Upgrade and Connection", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port, {
      headers: [
        ["Keep-Alive", "timeout=5"],
        ["TE", "trailers"],
        ["Proxy-Authorization", "Basic eDp5"],
        ["X-Forwarded-For", "203.0.113.9"],
        ["X-Hop", "secret"],
        ["Connection", "X-Hop"],
        ["Origin", "http://app.example"],
      ],
    });
    expect((await c.head()).status).toBe(101);

    const seen = chat.seen[0]?.headers;
    expect(seen?.host).toBe("app.example");
    // Not a trusted proxy (TRUSTED_PROXIES): the client's own X-Forwarded-For is replaced.
    expect(seen?.["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen?.forwarded).toBe("for=127.0.0.1;host=app.example;proto=http");
    expect([seen?.["x-forwarded-proto"], seen?.["x-forwarded-host"]]).toEqual(["http", "app.example"]);
    expect([seen?.upgrade, seen?.connection]).toEqual(["websocket", "upgrade"]);
    expect([seen?.["sec-websocket-key"], seen?.["sec-websocket-version"], seen?.origin]).toEqual([
      CLIENT_KEY,
      "13",
      "http://app.example",
    ]);
    for (const name of ["keep-alive", "te", "proxy-authorization", "x-hop"])
      expect(seen?.[name]).toBeUndefined();
  });

  it("refuses an upgrade request that declares a body with 400 and never touches a backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(canary) }));

    const c = client(r.port, { headers: [["Content-Length", "4"]], early: "abcd" });
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([
      400,
      expect.stringMatching(/^\{"error":"bad_request","requestId":"[\w-]+"\}$/),
    ]);
    expect(canary.connections()).toBe(0);
  });
});

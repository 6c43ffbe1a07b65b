import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../store/memory-store.js";
import { freePort } from "../../support/redis.js";
import { ep, publish, serviceRecord } from "../fixtures.js";
import { ROUTER_KINDS, send, sendRaw } from "../harness.js";
import { appTestKit, at } from "./kit.js";

/** Routing through the whole app on both proxy paths: which backend a request reaches, or which error. */
const { backend, routerOf } = appTestKit();

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);

  describe("routing and errors", () => {
    it("proxies by Host to a backend the store lists", async () => {
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, { path: "/hello?x=1" });
      expect(res.status).toBe(200);
      expect(res.body).toBe("ok GET /hello?x=1");
    });

    it("answers 404 no_route for a host nobody published", async () => {
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep("127.0.0.1", 9)] }));
      const res = await send(r.port, { headers: { host: "unknown.example" } });
      expect([res.status, res.body]).toEqual([
        404,
        expect.stringMatching(/^\{"error":"no_route","requestId":"[\w-]+"\}$/),
      ]);
    });

    it("answers 503 no_endpoints with Retry-After for a route without endpoints", async () => {
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a" }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([
        503,
        expect.stringMatching(/^\{"error":"no_endpoints","requestId":"[\w-]+"\}$/),
      ]);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("answers 503 no_snapshot with Retry-After when no snapshot was ever loaded", async () => {
      const r = await router({ source: { current: () => undefined } });
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([
        503,
        expect.stringMatching(/^\{"error":"no_snapshot","requestId":"[\w-]+"\}$/),
      ]);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("answers 502 bad_gateway when every backend refuses connections", async () => {
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep("127.0.0.1", await freePort())] }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([
        502,
        expect.stringMatching(/^\{"error":"bad_gateway","requestId":"[\w-]+"\}$/),
      ]);
    });

    it("reaches IPv6 backends as [addr]:port", async () => {
      const b = await backend("::1");
      const r = await router({ config: { ipFamily: "PreferIPv6" } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep("127.0.0.1", 9)], ipv6: [at(b)] }));
      const res = await send(r.port, { path: "/six" });
      expect([res.status, res.body]).toEqual([200, "ok GET /six"]);
      expect(b.seen).toHaveLength(1);
    });
  });

  describe("stale clusters", () => {
    it("drops a stale cluster while another is fresh, and serves stale ones when all are stale", async () => {
      // The router's own clock: it counts FAIL_STATIC_MAX_MS from the heartbeats' `at`.
      let now = Date.now();
      const store = new MemoryStore(() => now);
      const inA = await backend("127.0.0.1");
      const inB = await backend("127.0.0.1");
      const r = await router({ store });
      const writerA = store.writer("a");
      const writerB = store.writer("b");
      await writerA.put(serviceRecord({ cluster: "a", ipv4: [at(inA)] }));
      await writerB.put(serviceRecord({ cluster: "b", ipv4: [at(inB)] }));
      await writerA.heartbeat({ holder: "t", leaseMs: 1_000, at: now });
      await writerB.heartbeat({ holder: "t", leaseMs: 10_000, at: now });
      now += 5_000;
      for (let i = 0; i < 8; i++) expect((await send(r.port, {})).status).toBe(200);
      expect([inA.seen.length, inB.seen.length]).toEqual([0, 8]);
      now += 10_000;
      for (let i = 0; i < 8; i++) expect((await send(r.port, {})).status).toBe(200);
      expect(inA.seen.length + inB.seen.length).toBe(16);
    });
  });

  describe("never an open proxy", () => {
    async function setUp() {
      const canary = await backend("127.0.0.1");
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", pathPrefix: "/api", ipv4: [at(b)] }));
      return { canary, b, r };
    }

    it("answers 404 to a Host it does not know, the canary's included", async () => {
      const { canary, b, r } = await setUp();
      for (const host of ["evil.example", `127.0.0.1:${canary.port}`]) {
        const res = await send(r.port, { path: "/api/x", headers: { host } });
        expect(res.status).toBe(404);
      }
      expect([canary.seen.length, b.seen.length]).toEqual([0, 0]);
    });

    it("ignores X-Forwarded-Host for routing", async () => {
      const { canary, b, r } = await setUp();
      const res = await send(r.port, {
        path: "/api/x",
        headers: { host: "evil.example", "x-forwarded-host": "app.example" },
      });
      expect(res.status).toBe(404);
      expect([canary.seen.length, b.seen.length]).toEqual([0, 0]);
    });

    it("never connects to an absolute-form request target", async () => {
      const { canary, b, r } = await setUp();
      const evil = await sendRaw(
        r.port,
        `GET http://127.0.0.1:${canary.port}/api/x HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`,
      );
      expect(evil).toMatch(/^HTTP\/1\.1 404/);
      const known = await sendRaw(
        r.port,
        "GET http://app.example/api/x HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
      );
      expect(known).toMatch(/^HTTP\/1\.1 200/);
      expect(canary.seen).toHaveLength(0);
      expect(b.seen.map((s) => s.url)).toEqual(["/api/x"]);
    });

    it.each([
      ["/api/../secret", 404, undefined],
      ["/api/%2e%2e/secret", 404, undefined],
      ["/api/%2E%2e/%2e%2e/etc", 404, undefined],
      ["/api/x/../y", 200, "/api/y"],
    ])("resolves dot segments in %s before routing", async (target, status, upstreamPath) => {
      const { canary, b, r } = await setUp();
      const reply = await sendRaw(
        r.port,
        `GET ${target} HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`,
      );
      expect(reply.startsWith(`HTTP/1.1 ${status}`)).toBe(true);
      expect(b.seen.map((s) => s.url)).toEqual(upstreamPath ? [upstreamPath] : []);
      expect(canary.seen).toHaveLength(0);
    });
  });
});

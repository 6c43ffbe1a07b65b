import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import type { UpstreamRequest } from "../../../functions/transports/upstream.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { EndpointRecord } from "../../../store/records.js";
import { freePort } from "../../support/redis.js";
import { ep, publish, serviceRecord } from "../fixtures.js";
import {
  type Backend,
  closeAfterEach,
  ROUTER_KINDS,
  type Router,
  type RouterKind,
  type RouterOptions,
  send,
  sendRaw,
  startBackend,
  startRouterOf,
} from "../harness.js";

const closing = closeAfterEach();

function backend(...args: Parameters<typeof startBackend>): Promise<Backend> {
  return closing(startBackend(...args));
}

function startFor(kind: RouterKind, options?: RouterOptions): Promise<Router> {
  return closing(startRouterOf(kind, options));
}

function at(b: Backend): EndpointRecord {
  return ep(b.host, b.port);
}

/** A backend that never answers (for timeouts); its sockets are closed by cleanup. */
const hang = () => {};

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = (options?: RouterOptions) => startFor(kind, options);

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
      expect([res.status, res.body]).toEqual([404, '{"error":"no_route"}']);
    });

    it("answers 503 no_endpoints with Retry-After for a route without endpoints", async () => {
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a" }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([503, '{"error":"no_endpoints"}']);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("answers 503 no_endpoints when no snapshot was ever loaded", async () => {
      const r = await router({ source: { current: () => undefined } });
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([503, '{"error":"no_endpoints"}']);
    });

    it("answers 502 bad_gateway when every backend refuses connections", async () => {
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep("127.0.0.1", await freePort())] }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([502, '{"error":"bad_gateway"}']);
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

  describe("proxy semantics", () => {
    it("streams the request body: the backend sees the first chunk before the client sends the rest", async () => {
      const firstChunkArrived = deferred();
      const b = await backend("127.0.0.1", (req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => {
          body += chunk;
          firstChunkArrived.resolve();
        });
        req.on("end", () => res.end(`got ${body}`));
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const response = new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: r.port,
            method: "POST",
            path: "/upload",
            headers: { host: "app.example" },
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (text += c));
            res.on("end", () => resolve(text));
          },
        );
        req.on("error", reject);
        req.write("first,");
        withTimeout(firstChunkArrived.promise, 5_000, "first chunk at the backend").then(
          () => req.end("second"),
          (error: Error) => req.destroy(error),
        );
      });
      expect(await response).toBe("got first,second");
    });

    it("streams the response body: the client gets the first chunk before the backend ends", async () => {
      const clientGotFirst = deferred();
      const b = await backend("127.0.0.1", (_req, res) => {
        res.write("first,");
        withTimeout(clientGotFirst.promise, 5_000, "first chunk at the client").then(
          () => res.end("second"),
          () => res.destroy(),
        );
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: r.port, path: "/", headers: { host: "app.example" } },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => {
              text += c;
              clientGotFirst.resolve();
            });
            res.on("end", () => resolve(text));
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(body).toBe("first,second");
    });

    it("strips hop-by-hop and Connection-listed headers in both directions", async () => {
      const b = await backend("127.0.0.1", (req, res) => {
        req.resume();
        res.setHeader("x-internal", "1");
        res.setHeader("connection", "x-internal");
        res.setHeader("proxy-authenticate", "Basic");
        res.setHeader("x-app", "kept");
        res.end("ok");
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {
        headers: {
          connection: "x-secret",
          "x-secret": "1",
          "keep-alive": "timeout=5",
          te: "trailers",
          "proxy-authorization": "Basic Zm9vOmJhcg==",
          "x-client": "kept",
        },
      });
      expect(res.status).toBe(200);
      const seen = b.seen[0]?.headers ?? {};
      for (const name of ["x-secret", "keep-alive", "te", "proxy-authorization"])
        expect(seen[name]).toBeUndefined();
      expect(seen["x-client"]).toBe("kept");
      expect(res.headers["x-internal"]).toBeUndefined();
      expect(res.headers["proxy-authenticate"]).toBeUndefined();
      expect(res.headers["x-app"]).toBe("kept");
    });

    it("drops Expect", async () => {
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const reply = await sendRaw(
        r.port,
        "PUT /e HTTP/1.1\r\nHost: app.example\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
      );
      expect(reply).toContain("ok PUT /e");
      expect(b.seen[0]?.headers.expect).toBeUndefined();
    });

    it("sets X-Forwarded-For/-Proto/-Host and Forwarded", async () => {
      const b = await backend("127.0.0.1");
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      await send(r.port, {
        headers: { "x-forwarded-for": "203.0.113.9", "x-forwarded-host": "evil.example" },
      });
      const seen = b.seen[0]?.headers ?? {};
      expect(seen["x-forwarded-for"]).toBe("203.0.113.9, 127.0.0.1");
      expect(seen["x-forwarded-proto"]).toBe("http");
      expect(seen["x-forwarded-host"]).toBe("app.example");
      expect(seen.forwarded).toBe("for=127.0.0.1;host=app.example;proto=http");
    });

    it("keeps the original Host in the headers handed to the transport", async () => {
      const b = await backend("127.0.0.1");
      const hosts: (string | null)[] = [];
      const fetchUpstream = createFetchUpstream(fetch);
      const recording = {
        send: (req: UpstreamRequest) => {
          hosts.push(req.headers.get("host"));
          return fetchUpstream.send(req);
        },
      };
      const r = await router({ upstream: recording });
      await publish(r.store, serviceRecord({ cluster: "a", hosts: ["app.example"], ipv4: [at(b)] }));
      const res = await send(r.port, { headers: { host: "App.Example:8080" } });
      expect(res.status).toBe(200);
      // Host names are case-insensitive (RFC 9110 §4.2.3); the URL parser lower-cases them.
      expect(hosts).toEqual(["app.example:8080"]);
    });

    it("passes redirects through instead of following them", async () => {
      const elsewhere = await backend("127.0.0.1");
      const b = await backend("127.0.0.1", (req, res) => {
        req.resume();
        res.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/target` });
        res.end();
      });
      const r = await router();
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {});
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(`http://127.0.0.1:${elsewhere.port}/target`);
      expect(elsewhere.seen).toHaveLength(0);
    });

    it("answers 504 upstream_timeout when the per-try timeout fires", async () => {
      const b = await backend("127.0.0.1", hang);
      const r = await router({ config: { tryTimeoutMs: 200, retries: 0 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([504, '{"error":"upstream_timeout"}']);
    });

    it("retries a timed-out GET on another backend", async () => {
      const slow = await backend("127.0.0.1", hang);
      const fast = await backend("127.0.0.1");
      const r = await router({ config: { tryTimeoutMs: 200, retries: 1 }, random: () => 0 });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(slow), at(fast)] }));
      const res = await send(r.port, {});
      expect(res.status).toBe(200);
      expect([slow.seen.length, fast.seen.length]).toEqual([1, 1]);
    });

    it("answers 504 when the total timeout ends the retries", async () => {
      const hanging = await Promise.all([1, 2, 3, 4].map(() => backend("127.0.0.1", hang)));
      const r = await router({ config: { tryTimeoutMs: 300, totalTimeoutMs: 450, retries: 3 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: hanging.map(at) }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([504, '{"error":"upstream_timeout"}']);
      const attempts = hanging.reduce((sum, h) => sum + h.seen.length, 0);
      expect(attempts).toBeGreaterThanOrEqual(1);
      expect(attempts).toBeLessThan(4);
    });

    it("retries a POST with a streamed body on another backend after a connect failure", async () => {
      const live = await backend("127.0.0.1", (req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (c: string) => (body += c));
        req.on("end", () => res.end(`got ${body}`));
      });
      const dead = ep("127.0.0.1", await freePort());
      const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, at(live)] }));
      for (let i = 0; i < 3; i++) {
        const res = await send(r.port, {
          method: "POST",
          body: `payload-${i}`,
          headers: { "transfer-encoding": "chunked" },
        });
        expect([res.status, res.body]).toEqual([200, `got payload-${i}`]);
      }
    });

    it("retries a failed GET on another backend but never a POST that reached a backend", async () => {
      const resetting = await backend("127.0.0.1", (req) => {
        req.resume();
        req.socket.destroy();
      });
      const live = await backend("127.0.0.1");
      const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(resetting), at(live)] }));
      const get = await send(r.port, { method: "GET" });
      expect(get.status).toBe(200);
      const post = await send(r.port, { method: "POST", body: "once" });
      expect([post.status, post.body]).toEqual([502, '{"error":"bad_gateway"}']);
      expect(resetting.seen.map((s) => s.method)).toEqual(["GET", "POST"]);
      expect(live.seen.map((s) => s.method)).toEqual(["GET"]);
    });

    it("ejects a failing backend after consecutive failures, but never beyond the cap", async () => {
      const live = await backend("127.0.0.1");
      const dead = ep("127.0.0.1", await freePort());
      const r = await router({ random: () => 0, config: { retries: 0 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, at(live)] }));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await send(r.port, {})).status);
      // p2c with random 0 always picks the dead backend first until it is ejected (3 failures).
      expect(statuses).toEqual([502, 502, 502, 200, 200, 200]);

      const alone = await router({ random: () => 0, config: { retries: 0 } });
      await publish(alone.store, serviceRecord({ cluster: "a", ipv4: [dead] }));
      const aloneStatuses: number[] = [];
      for (let i = 0; i < 5; i++) aloneStatuses.push((await send(alone.port, {})).status);
      // The cap (50% of one backend is zero) keeps the only backend in: still tried, still 502, never 503.
      expect(aloneStatuses).toEqual([502, 502, 502, 502, 502]);
    });
  });

  describe("stale clusters", () => {
    it("drops a stale cluster while another is fresh, and serves stale ones when all are stale", async () => {
      let now = 1_000_000;
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

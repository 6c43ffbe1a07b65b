import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { BACKEND_TLS_SCHEMA_VERSION } from "../../store/backend-tls.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import type { BackendRef, RouteRule } from "../../store/routes.js";
import {
  endpoint,
  heartbeat,
  putRecord,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecord,
  serviceRecordV2,
} from "../e2e/support/contract-layout.js";
import { binomialTail } from "../functions/statistics.js";
import { REDIS_URL } from "../support/redis.js";
import { type Backend, CLUSTER, get, namedBackend, workerFixture } from "./worker-fixture.js";

/** Version 2 route records in real workerd (the web path as Workers runs it): weights, matches, filters. */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-routes");

/** Echoes what it got (method, path, chosen request headers) as JSON and sets a few response headers. */
const echoBackend = (request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  response.writeHead(200, { "content-type": "application/json", server: "backend/1", "x-served-by": "pod" });
  response.end(
    JSON.stringify({
      method: request.method,
      url: request.url,
      env: request.headers["x-env"] ?? null,
      cookie: request.headers.cookie ?? null,
      forwardedHost: request.headers["x-forwarded-host"] ?? null,
    }),
  );
};

/** Writes each backend as Service shop/<name> port 80 and one route of `rules` for shop.test; returns a Worker on it. */
async function workerWith(backends: Record<string, Backend>, rules: RouteRule[]) {
  const prefix = freshPrefix();
  await heartbeat(redis(), prefix, CLUSTER, 120_000);
  for (const [name, b] of Object.entries(backends)) {
    await putServiceV2(
      redis(),
      prefix,
      serviceRecordV2({
        cluster: CLUSTER,
        service: `shop/${name}`,
        ports: [{ number: 80, ipv4: [endpoint(b.ip, b.port)] }],
      }),
    );
  }
  await putRoute(
    redis(),
    prefix,
    CLUSTER,
    routeRecord("httproute:shop/front", { hostnames: ["shop.test"], rules }),
  );
  return { prefix, mf: worker({ REDIS_URL, EDGESLICE_PREFIX: prefix }) };
}

const to = (name: string, weight = 1): BackendRef => ({ service: `shop/${name}`, port: 80, weight });

describe("version 2 routes in workerd", () => {
  it("splits requests 90/10 over 300 requests, within a bound the binomial tail justifies", async () => {
    const stable = await backend("127.0.0.1", namedBackend("stable"));
    const canary = await backend("127.0.0.1", namedBackend("canary"));
    const { mf } = await workerWith({ stable, canary }, [routeRule([to("stable", 90), to("canary", 10)])]);
    // Canary requests ~ Binomial(300, 0.1): mean 30, sd 5.2; off by 28 or more has probability < 1e-6.
    expect(binomialTail(300, 0.1, 28)).toBeLessThan(1e-6);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 300; i++) {
      const reply = await get(mf, "http://shop.test/");
      const name = reply.headers.get("x-backend") ?? String(reply.status);
      counts[name] = (counts[name] ?? 0) + 1;
    }
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(["canary", "stable"]);
    expect(Math.abs((counts.canary ?? 0) - 30), JSON.stringify(counts)).toBeLessThan(28);
  });

  it("rewrites the path and modifies request and response headers", async () => {
    const web = await backend("127.0.0.1", echoBackend);
    const { mf } = await workerWith({ web }, [
      routeRule([to("web")], {
        matches: [{ path: { type: "PathPrefix", value: "/api" }, headers: [] }],
        filters: {
          rewrite: { path: { type: "ReplacePrefixMatch", value: "/v2" } },
          requestHeaders: { set: [{ name: "x-env", value: "prod" }], add: [], remove: ["cookie"] },
          responseHeaders: {
            set: [],
            add: [{ name: "x-served-by", value: "edgeslice" }],
            remove: ["server"],
          },
        },
      }),
    ]);
    const reply = await get(mf, "http://shop.test/api/items?q=1", {
      headers: { "x-env": "dev", cookie: "a=1" },
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({
      method: "GET",
      url: "/v2/items?q=1",
      env: "prod",
      cookie: null,
      forwardedHost: "shop.test",
    });
    expect(reply.headers.get("x-served-by")).toBe("pod, edgeslice");
    expect(reply.headers.get("server")).toBeNull();
  });

  it("answers a RequestRedirect and an invalid backend itself, and routes by header and method", async () => {
    const web = await backend("127.0.0.1", namedBackend("web"));
    const canary = await backend("127.0.0.1", namedBackend("canary"));
    const { mf } = await workerWith({ web, canary }, [
      routeRule([to("web")], {
        matches: [{ path: { type: "Exact", value: "/old" }, headers: [] }],
        filters: { redirect: { statusCode: 301, scheme: "https", hostname: "www.shop.test" } },
      }),
      routeRule([{ invalid: "BackendNotFound: shop/gone", weight: 1 }], {
        matches: [{ path: { type: "PathPrefix", value: "/gone" }, headers: [] }],
      }),
      routeRule([to("canary")], {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ name: "x-canary", value: "on" }] }],
      }),
      routeRule([to("canary")], {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [], method: "PUT" }],
      }),
      routeRule([to("web")]),
    ]);
    const redirect = await get(mf, "http://shop.test/old?x=1", { redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([
      301,
      "https://www.shop.test/old?x=1",
    ]);
    const gone = await get(mf, "http://shop.test/gone");
    expect(gone.status).toBe(500);
    expect(JSON.parse(gone.body)).toMatchObject({ error: "invalid_backend" });
    expect(
      (await get(mf, "http://shop.test/a", { headers: { "x-canary": "on" } })).headers.get("x-backend"),
    ).toBe("canary");
    expect((await get(mf, "http://shop.test/b", { method: "PUT" })).headers.get("x-backend")).toBe("canary");
    expect((await get(mf, "http://shop.test/c")).headers.get("x-backend")).toBe("web");
  });

  it("retries a rule's retry codes (HTTPRouteRetry) on the one pod, after its backoff, and answers the success", async () => {
    const arrivals: number[] = [];
    const flaky = await backend("127.0.0.1", (request, response) => {
      request.resume();
      arrivals.push(performance.now());
      if (arrivals.length <= 2) response.writeHead(503, { "content-length": "0" }).end();
      else response.writeHead(200, { "x-backend": "flaky" }).end("ok");
    });
    const { mf } = await workerWith({ flaky }, [
      routeRule([to("flaky")], { retry: { codes: [503], attempts: 2, backoffMs: 100 } }),
    ]);
    const reply = await get(mf, "http://shop.test/");
    expect([reply.status, reply.body]).toEqual([200, "ok"]);
    expect(arrivals).toHaveLength(3);
    expect((arrivals[2] ?? 0) - (arrivals[1] ?? 0)).toBeGreaterThanOrEqual(100);
  });

  it("answers 502 backend_tls_unsupported for a port whose BackendTLSPolicy asks for TLS, never sending in cleartext, and reads past backend TLS records", async () => {
    const plain = await backend("127.0.0.1", namedBackend("plain"));
    const prefix = freshPrefix();
    await heartbeat(redis(), prefix, CLUSTER, 120_000);
    const tlsPort = { number: 443, ipv4: [endpoint(plain.ip, plain.port)], tlsPolicy: "shop/api-tls" };
    await putServiceV2(
      redis(),
      prefix,
      serviceRecordV2({ cluster: CLUSTER, service: "shop/api", ports: [tlsPort] }),
    );
    await createRedisWriter(redis(), { prefix, cluster: CLUSTER }).backendTls?.putBackendTls({
      v: BACKEND_TLS_SCHEMA_VERSION,
      kind: "policy",
      id: "shop/api-tls",
      version: "a".repeat(64),
      hostname: "api.shop.test",
      subjectAltNames: [],
      trust: { system: true },
    });
    const rules = [routeRule([{ service: "shop/api", port: 443, weight: 1 }])];
    await putRoute(
      redis(),
      prefix,
      CLUSTER,
      routeRecord("httproute:shop/api", { hostnames: ["shop.test"], rules }),
    );
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const reply = await get(mf, "http://shop.test/");
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "backend_tls_unsupported" });
    expect(reply.headers.get("x-backend")).toBeNull();
  });

  it("serves a version 1 record next to version 2 ones", async () => {
    const legacy = await backend("127.0.0.1", namedBackend("legacy"));
    const web = await backend("127.0.0.1", namedBackend("web"));
    const { prefix, mf } = await workerWith({ web }, [routeRule([to("web")])]);
    await putRecord(
      redis(),
      prefix,
      serviceRecord({
        cluster: CLUSTER,
        service: "shop/legacy",
        hosts: ["legacy.test"],
        ipv4: [endpoint(legacy.ip, legacy.port)],
      }),
    );
    expect((await get(mf, "http://legacy.test/x")).headers.get("x-backend")).toBe("legacy");
    expect((await get(mf, "http://shop.test/x")).headers.get("x-backend")).toBe("web");
  });
});

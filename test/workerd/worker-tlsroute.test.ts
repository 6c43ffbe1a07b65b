import { describe, expect, it } from "vitest";
import {
  endpoint,
  heartbeat,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecordV2,
} from "../e2e/support/contract-layout.js";
import { REDIS_URL } from "../support/redis.js";
import { CLUSTER, get, namedBackend, workerFixture } from "./worker-fixture.js";

/**
 * TLSRoute records in real workerd: TLS passthrough is Cloudflare's edge there (docs/workers.md), so a Worker
 * serves no TLSRoute, and its records must change nothing else: no HTTP request is ever matched against one,
 * not even for a host an HTTPRoute also serves, and every other record of the cluster keeps serving.
 */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-tlsroute");

describe("TLSRoute records on Workers", () => {
  it("are never matched by an HTTP request, while the cluster's HTTPRoutes, of their host too, keep serving", async () => {
    let reachedTls = 0;
    const web = await backend("127.0.0.1", namedBackend("web"));
    const tls = await backend("127.0.0.1", (request, response) => {
      reachedTls++;
      namedBackend("tls")(request, response);
    });
    const prefix = freshPrefix();
    await heartbeat(redis(), prefix, CLUSTER, 120_000);
    for (const [service, at] of [
      ["shop/web", web],
      ["shop/tls", tls],
    ] as const) {
      await putServiceV2(
        redis(),
        prefix,
        serviceRecordV2({
          cluster: CLUSTER,
          service,
          ports: [{ number: 80, ipv4: [endpoint(at.ip, at.port)] }],
        }),
      );
    }
    const to = (service: string) => [routeRule([{ service, port: 80, weight: 1 }])];
    const listeners = [{ gateway: "shop/gw", port: 443, hostnames: [] }];
    await putRoute(redis(), prefix, CLUSTER, {
      ...routeRecord("tlsroute:shop/db", { hostnames: ["db.test", "both.test"], rules: to("shop/tls") }),
      listeners,
    });
    await putRoute(redis(), prefix, CLUSTER, {
      ...routeRecord("tlsroute:shop/any", { hostnames: [], rules: to("shop/tls") }),
      listeners,
    });
    await putRoute(
      redis(),
      prefix,
      CLUSTER,
      routeRecord("httproute:shop/web", { hostnames: ["web.test", "both.test"], rules: to("shop/web") }),
    );
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    // The first request is a cold read by host; the later ones are served from the isolate's records.
    for (let round = 0; round < 2; round++) {
      const tlsOnly = await get(mf, "https://db.test/");
      expect([tlsOnly.status, JSON.parse(tlsOnly.body).error]).toEqual([404, "no_route"]);
      expect((await get(mf, "https://web.test/a")).body).toBe("web GET /a forwarded-host=web.test");
      expect((await get(mf, "https://both.test/b")).body).toBe("web GET /b forwarded-host=both.test");
      expect((await get(mf, "https://elsewhere.test/")).status).toBe(404);
    }
    expect(reachedTls).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { createRedisWriter } from "../../store/redis/writer.js";
import { REDIS_URL } from "../support/redis.js";
import { CLUSTER, get, publish, record, workerFixture } from "./worker-fixture.js";

/** The metrics endpoint of the Worker bundle in real workerd: the same sliced render and settings as on Node. */
const { redis, freshPrefix, worker } = workerFixture("workerd-metrics");

describe("the Worker bundle's metrics in workerd", () => {
  it("streams the exposition, a timer turn between slices, with METRICS_BACKENDS=cluster sums and leaves its own healthz answers out of the traffic", async () => {
    const prefix = freshPrefix();
    // Data only: no request names these hosts, so nothing connects to the addresses.
    const records = Array.from({ length: 300 }, (_, i) =>
      record(
        `shop/web-${i}`,
        [`web-${i}.example.test`],
        [{ ip: `127.${1 + (i >> 8)}.${i & 255}.1`, port: 8080 }],
      ),
    );
    await publish(createRedisWriter(redis(), { prefix, cluster: CLUSTER }), records);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix, ADMIN_TOKEN: "t", METRICS_BACKENDS: "cluster" });

    expect((await get(mf, "http://router.example.test/_edgeslice/healthz")).status).toBe(200);
    const scrape = await get(mf, "http://router.example.test/_edgeslice/metrics", {
      headers: { authorization: "Bearer t" },
    });

    expect(scrape.status).toBe(200);
    expect(scrape.body.match(/^edgeslice_backends\{.*$/gm)).toEqual([
      `edgeslice_backends{cluster="${CLUSTER}",family="ipv4",state="ready"} 300`,
      `edgeslice_backends{cluster="${CLUSTER}",family="ipv4",state="fallback"} 0`,
      `edgeslice_backends{cluster="${CLUSTER}",family="ipv4",state="draining"} 0`,
      `edgeslice_backends{cluster="${CLUSTER}",family="ipv4",state="ejected"} 0`,
    ]);
    expect(scrape.body).toContain('edgeslice_requests_total{class="2xx"} 0');
  });
});

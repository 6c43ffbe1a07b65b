import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import type { BackendSeries } from "../../../functions/core/observability/backend-metrics.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import type { ServiceRecord } from "../../../store/records.js";
import type { SnapshotSource } from "../../../store/store.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

const auth = { authorization: "Bearer secret-token" };

function appWith(source: SnapshotSource, metricsBackends?: BackendSeries) {
  return createApp({
    source,
    upstream: createFetchUpstream(fetch),
    config: { ...testConfig, ...(metricsBackends ? { metricsBackends } : {}) },
    now: Date.now,
    random: Math.random,
    balancing: "p2c",
    logger: silentLogger,
  });
}

/** `services` Services of one loopback endpoint each in cluster east (data only: nothing is proxied). */
function storeOf(services: number): SnapshotSource {
  const records: ServiceRecord[] = [];
  for (let i = 0; i < services; i++) {
    records.push(
      serviceRecord({ cluster: "east", service: `shop/web-${i}`, ipv4: [ep(`127.0.${i >> 8}.${i & 255}`)] }),
    );
  }
  const snapshot = snapshotOf([{ name: "east", records }]);
  return { current: () => snapshot };
}

async function chunksOf(response: Response): Promise<string[]> {
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  const reader = response.body?.getReader();
  if (!reader) throw new Error("no body");
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return chunks;
    chunks.push(decoder.decode(value));
  }
}

describe("/_edgeslice/metrics", () => {
  it("counts the router's own answers in no request series: healthz's 503 no_snapshot, a refused scrape", async () => {
    const app = appWith({ current: () => undefined });
    for (let i = 0; i < 3; i++)
      expect((await app.request("http://router/_edgeslice/healthz")).status).toBe(503);
    expect((await app.request("http://router/_edgeslice/metrics")).status).toBe(401);
    expect((await app.request("http://router/_edgeslice/routes", { headers: auth })).status).toBe(200);

    const text = await (await app.request("http://router/_edgeslice/metrics", { headers: auth })).text();

    for (const klass of ["1xx", "2xx", "3xx", "4xx", "5xx", "client_closed"]) {
      expect(text).toContain(`edgeslice_requests_total{class="${klass}"} 0`);
    }
    expect(text).not.toMatch(/^edgeslice_request_duration_seconds_count/m);
  });

  it("still counts a proxied request the router answers itself (no snapshot yet: 503)", async () => {
    const app = appWith({ current: () => undefined });
    expect((await app.request("http://shop.example.test/")).status).toBe(503);

    const text = await (await app.request("http://router/_edgeslice/metrics", { headers: auth })).text();

    expect(text).toContain('edgeslice_requests_total{class="5xx"} 1');
    expect(text).toContain(
      'edgeslice_request_duration_seconds_count{service="",cluster="",method="GET",code="503"} 1',
    );
  });

  it("streams a large store's exposition in several chunks that add up to the whole", async () => {
    const response = await appWith(storeOf(3_000)).request("http://router/_edgeslice/metrics", {
      headers: auth,
    });
    expect(response.headers.get("content-type")).toContain("text/plain");

    const chunks = await chunksOf(response);
    const text = chunks.join("");

    expect(chunks.length).toBeGreaterThan(5);
    expect(text.match(/^edgeslice_backends\{.*$/gm)).toHaveLength(3_000 * 4);
    expect(text).toContain(
      'edgeslice_backends{service="shop/web-2999",cluster="east",family="ipv4",state="ready"} 1',
    );
    expect(text.endsWith("\n")).toBe(true);
  });

  it("takes METRICS_BACKENDS from the config: cluster keeps one sum per state", async () => {
    const text = await (
      await appWith(storeOf(300), "cluster").request("http://router/_edgeslice/metrics", { headers: auth })
    ).text();

    expect(text.match(/^edgeslice_backends\{.*$/gm)).toEqual([
      'edgeslice_backends{cluster="east",family="ipv4",state="ready"} 300',
      'edgeslice_backends{cluster="east",family="ipv4",state="fallback"} 0',
      'edgeslice_backends{cluster="east",family="ipv4",state="draining"} 0',
      'edgeslice_backends{cluster="east",family="ipv4",state="ejected"} 0',
    ]);
  });
});

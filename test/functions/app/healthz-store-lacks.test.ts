import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import { createRouting } from "../../../functions/core/routing.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { ep, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";

async function healthz(store: MemoryStore) {
  const deps = {
    source: store,
    upstream: createFetchUpstream(fetch),
    config: testConfig,
    now: Date.now,
    random: Math.random,
    balancing: "p2c" as const,
    logger: silentLogger,
  };
  const app = createApp(deps, createRouting(deps));
  const response = await app.request("http://router/_edgeslice/healthz");
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("/_edgeslice/healthz when the store lacks what a sync holds", () => {
  it("says degraded, naming how many Service records are missing, when a sync's beat holds more than the store has", async () => {
    const store = new MemoryStore();
    const east = store.writer("east");
    await east.put(serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("127.0.0.1")] }));
    await east.heartbeat({ holder: "east-0", leaseMs: 60_000, at: Date.now(), services: 3 });

    const answer = await healthz(store);

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: "degraded",
      clusters: [{ name: "east", services: 1, missingServices: 2 }],
    });
  });

  it("says ok when the store holds every Service record the sync holds", async () => {
    const store = new MemoryStore();
    const east = store.writer("east");
    await east.put(serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("127.0.0.1")] }));
    await east.heartbeat({ holder: "east-0", leaseMs: 60_000, at: Date.now(), services: 1 });

    expect((await healthz(store)).body).toMatchObject({
      status: "ok",
      clusters: [{ name: "east", services: 1 }],
    });
  });
});

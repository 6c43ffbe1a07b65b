import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { decodeServiceRecord, SCHEMA_VERSION, type ServiceRecord } from "../../../store/records.js";
import type { ClusterWriter } from "../../../store/store.js";
import { createSyncMetrics, type SyncMetrics } from "../../../sync/metrics.js";
import { createReconciler, type Reconciler } from "../../../sync/publish/reconciler.js";
import { createSafetyValve } from "../../../sync/publish/safety-valve.js";
import type { ExposeService } from "../../../sync/publish/service-publisher.js";
import type { KubeEndpointSlice, KubeService } from "../../../sync/translate/kube-objects.js";
import type { ClusterCache } from "../../../sync/translate/types.js";

/** A ClusterCache over plain objects, standing in for the informers. */
class PlainCache implements ClusterCache {
  readonly #services = new Map<string, KubeService>();
  readonly #slices = new Map<string, KubeEndpointSlice[]>();

  setService(namespace: string, name: string, hosts: string | undefined): void {
    const annotations: Record<string, string> = hosts === undefined ? {} : { "edgeslice.io/hosts": hosts };
    this.#services.set(`${namespace}/${name}`, {
      metadata: { name, namespace, annotations },
      spec: { ports: [{ name: "http", port: 80 }] },
    });
  }
  setEndpoints(namespace: string, name: string, ips: string[]): void {
    this.#slices.set(`${namespace}/${name}`, [
      {
        metadata: { name: `${name}-abc`, namespace, labels: { "kubernetes.io/service-name": name } },
        addressType: "IPv4",
        endpoints: ips.map((ip) => ({ addresses: [ip] })),
        ports: [{ name: "http", port: 8080 }],
      },
    ]);
  }
  deleteService(namespace: string, name: string): void {
    this.#services.delete(`${namespace}/${name}`);
    this.#slices.delete(`${namespace}/${name}`);
  }
  services(): readonly KubeService[] {
    return [...this.#services.values()];
  }
  service(namespace: string, name: string): KubeService | undefined {
    return this.#services.get(`${namespace}/${name}`);
  }
  slicesOf(namespace: string, serviceName: string): readonly KubeEndpointSlice[] {
    return this.#slices.get(`${namespace}/${serviceName}`) ?? [];
  }
}

/**
 * A small stand-in for the translation core (its own tests live with it): the hosts annotation exposes
 * the Service, "!" marks it malformed, endpoints are the slices' first addresses.
 */
const expose: ExposeService = (cluster, service, slices) => {
  const hosts = service.metadata.annotations?.["edgeslice.io/hosts"];
  if (hosts === undefined) return { kind: "not-exposed" };
  if (hosts.includes("!")) return { kind: "invalid", reason: `bad host in "${hosts}"` };
  const ips = slices.flatMap((slice) => (slice.endpoints ?? []).map((e) => e.addresses[0] ?? "")).sort();
  const record: ServiceRecord = {
    v: SCHEMA_VERSION,
    cluster,
    service: `${service.metadata.namespace}/${service.metadata.name}`,
    hosts: hosts.split(","),
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: ips.map((ip) => ({ ip, port: 8080 })), fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
  return { kind: "exposed", record };
};

interface RecordingWriter extends ClusterWriter {
  readonly calls: string[];
  failNext: number;
  maxConcurrent: number;
}

function recordingWriter(inner: ClusterWriter, delayMs = 0): RecordingWriter {
  let concurrent = 0;
  const guard = async <T>(label: string, action: () => Promise<T>): Promise<T> => {
    concurrent++;
    writer.maxConcurrent = Math.max(writer.maxConcurrent, concurrent);
    try {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (writer.failNext > 0) {
        writer.failNext--;
        throw new Error("connection refused");
      }
      writer.calls.push(label);
      return await action();
    } finally {
      concurrent--;
    }
  };
  const writer: RecordingWriter = {
    cluster: inner.cluster,
    calls: [],
    failNext: 0,
    maxConcurrent: 0,
    put: (record) => guard(`put ${record.service}`, () => inner.put(record)),
    remove: (service) => guard(`remove ${service}`, () => inner.remove(service)),
    load: () => guard("load", () => inner.load()),
    heartbeat: (beat) => inner.heartbeat(beat),
  };
  return writer;
}

function endpointsIn(writer: ClusterWriter, service: string): Promise<string[] | undefined> {
  return writer.load().then((stored) => {
    const raw = stored.get(service);
    if (raw === undefined) return undefined;
    const decoded = decodeServiceRecord(raw);
    return decoded.ok ? decoded.value.ipv4.endpoints.map((e) => e.ip) : undefined;
  });
}

describe("reconciler", () => {
  let cache: PlainCache;
  let store: MemoryStore;
  let writer: RecordingWriter;
  let metrics: SyncMetrics;
  let reconciler: Reconciler;

  const build = (overrides: { holdMs?: number; writeDelayMs?: number } = {}) => {
    writer = recordingWriter(store.writer("east"), overrides.writeDelayMs);
    reconciler = createReconciler({
      cache,
      writer,
      cluster: "east",
      expose,
      valve: createSafetyValve({ maxLossFraction: 0.5, minLoss: 2, holdMs: overrides.holdMs ?? 30_000 }),
      logger: silentLogger,
      metrics,
      debounceMs: 50,
      maxWaitMs: 500,
      retryBaseMs: 100,
      retryMaxMs: 1_000,
    });
    return reconciler;
  };

  beforeEach(() => {
    vi.useFakeTimers();
    cache = new PlainCache();
    store = new MemoryStore();
    metrics = createSyncMetrics();
    cache.setService("shop", "web", "web.example.com");
    cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2"]);
    cache.setService("shop", "internal", undefined);
    cache.setEndpoints("shop", "internal", ["10.0.1.1"]);
  });
  afterEach(async () => {
    await reconciler.stop();
    vi.useRealTimers();
  });

  it("publishes nothing before it is enabled", async () => {
    build();
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(writer.calls).toEqual([]);
  });

  it("on enable loads the store and publishes exposed Services only", async () => {
    build();
    await reconciler.enable();
    expect(writer.calls).toEqual(["load", "put shop/web"]);
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(writer, "shop/internal")).toBeUndefined();
  });

  it("coalesces a burst of events into one write after the quiet period", async () => {
    build();
    await reconciler.enable();
    writer.calls.length = 0;
    for (let i = 3; i < 13; i++) {
      cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", `10.0.0.${i}`]);
      reconciler.markDirty("shop", "web");
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(writer.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    expect(writer.calls).toEqual(["put shop/web"]);
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.12", "10.0.0.2"]);
  });

  it("still flushes a constant stream of events once max-wait has passed", async () => {
    build();
    await reconciler.enable();
    writer.calls.length = 0;
    for (let i = 0; i < 20; i++) {
      reconciler.markDirty("shop", "web");
      cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", `10.0.0.${100 + i}`]);
      await vi.advanceTimersByTimeAsync(30);
    }
    // 600 ms of events 30 ms apart never leave a 50 ms quiet period; max-wait (500 ms) forces one write.
    expect(writer.calls).toEqual(["put shop/web"]);
  });

  it("skips a write when the recomputed record equals the stored one", async () => {
    build();
    await reconciler.enable();
    writer.calls.length = 0;
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(writer.calls).toEqual([]);
    expect(metrics.get("skippedUnchanged")).toBe(1);
  });

  it("removes the record when the Service is deleted", async () => {
    build();
    await reconciler.enable();
    cache.deleteService("shop", "web");
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(writer.calls.at(-1)).toBe("remove shop/web");
    expect(await endpointsIn(writer, "shop/web")).toBeUndefined();
  });

  it("removes the record when the Service is no longer exposed", async () => {
    build();
    await reconciler.enable();
    cache.setService("shop", "web", undefined);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(writer.calls.at(-1)).toBe("remove shop/web");
  });

  it("keeps the last good record when annotations turn malformed, and still updates other Services", async () => {
    cache.setService("shop", "api", "api.example.com");
    cache.setEndpoints("shop", "api", ["10.0.2.1"]);
    build();
    await reconciler.enable();
    cache.setService("shop", "web", "web.example.com,!oops");
    cache.setEndpoints("shop", "api", ["10.0.2.1", "10.0.2.2"]);
    reconciler.markDirty("shop", "web");
    reconciler.markDirty("shop", "api");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(writer, "shop/api")).toEqual(["10.0.2.1", "10.0.2.2"]);
    expect(metrics.get("invalidServices")).toBe(1);
  });

  it("full resync removes leftovers of a previous run and re-pushes what the store lost", async () => {
    const leftover = store.writer("east");
    const stale = expose(
      "east",
      {
        metadata: {
          name: "gone",
          namespace: "shop",
          annotations: { "edgeslice.io/hosts": "gone.example.com" },
        },
      },
      [],
    );
    if (stale.kind !== "exposed") throw new Error("fixture must expose");
    await leftover.put(stale.record);
    build();
    await reconciler.enable();
    expect(await endpointsIn(writer, "shop/gone")).toBeUndefined();
    expect(writer.calls).toContain("remove shop/gone");

    // The store restarts empty: a full resync puts everything back.
    await leftover.remove("shop/web");
    writer.calls.length = 0;
    await reconciler.fullResync();
    expect(writer.calls).toEqual(["load", "put shop/web"]);
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
  });

  it("keeps a Service dirty after a failed write and retries with growing backoff", async () => {
    build();
    await reconciler.enable();
    writer.calls.length = 0;
    writer.failNext = 3;
    cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(60); // first attempt fails
    expect(metrics.get("writeErrors")).toBe(1);
    expect(reconciler.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(100); // second attempt (after 100 ms) fails
    expect(metrics.get("writeErrors")).toBe(2);
    await vi.advanceTimersByTimeAsync(150); // third waits 200 ms: not yet
    expect(metrics.get("writeErrors")).toBe(2);
    await vi.advanceTimersByTimeAsync(50);
    expect(metrics.get("writeErrors")).toBe(3);
    await vi.advanceTimersByTimeAsync(400);
    expect(writer.calls).toEqual(["put shop/web"]);
    expect(reconciler.pending).toBe(0);
  });

  it("resolves a full resync only once a pass that failed has been retried to the end", async () => {
    cache.setService("shop", "api", "api.example.com");
    cache.setEndpoints("shop", "api", ["10.0.2.1"]);
    build();
    await reconciler.enable();
    // The store lost everything; the next two store calls fail (the load, then the load again).
    const inner = store.writer("east");
    await inner.remove("shop/web");
    await inner.remove("shop/api");
    writer.failNext = 2;
    let done = false;
    const resync = reconciler.fullResync().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect([done, metrics.get("writeErrors")]).toEqual([false, 1]);
    await vi.advanceTimersByTimeAsync(100);
    expect([done, metrics.get("writeErrors")]).toEqual([false, 2]);
    await vi.advanceTimersByTimeAsync(200);
    await resync;
    expect(done).toBe(true);
    expect(await endpointsIn(inner, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(inner, "shop/api")).toEqual(["10.0.2.1"]);
  });

  it("stops waiting for a failing full resync when publishing is disabled", async () => {
    build();
    await reconciler.enable();
    writer.failNext = 1_000;
    let done = false;
    const resync = reconciler.fullResync().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(done).toBe(false);
    await reconciler.disable();
    await resync;
    expect(done).toBe(true);
  });

  it("holds a mass removal and publishes it once it has persisted for the hold time", async () => {
    cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    build({ holdMs: 1_000 });
    await reconciler.enable();
    cache.setEndpoints("shop", "web", ["10.0.0.1"]);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(writer, "shop/web")).toHaveLength(4);
    expect(metrics.get("valveHolds")).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.1"]);
  });

  it("drops a held removal when the endpoints come back before the hold time", async () => {
    cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    build({ holdMs: 1_000 });
    await reconciler.enable();
    writer.calls.length = 0;
    cache.setEndpoints("shop", "web", []);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(300);
    cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(writer.calls).toEqual([]);
    expect(await endpointsIn(writer, "shop/web")).toHaveLength(4);
  });

  it("publishes the delete of a Service at once, whatever the valve", async () => {
    build({ holdMs: 60_000 });
    await reconciler.enable();
    cache.deleteService("shop", "web");
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(writer, "shop/web")).toBeUndefined();
  });

  it("stops writing once disabled and reloads the store when enabled again", async () => {
    build();
    await reconciler.enable();
    await reconciler.disable();
    writer.calls.length = 0;
    cache.setEndpoints("shop", "web", ["10.0.0.9"]);
    reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writer.calls).toEqual([]);
    await reconciler.enable();
    expect(writer.calls).toEqual(["load", "put shop/web"]);
  });

  it("flush publishes pending changes without waiting for the debounce", async () => {
    build();
    await reconciler.enable();
    cache.setEndpoints("shop", "web", ["10.0.0.7"]);
    reconciler.markDirty("shop", "web");
    await reconciler.flush();
    expect(await endpointsIn(writer, "shop/web")).toEqual(["10.0.0.7"]);
  });
});

describe("reconciler write ordering", () => {
  it("never runs two store writes at once", async () => {
    const cache = new PlainCache();
    for (let i = 0; i < 20; i++) {
      cache.setService("shop", `s${i}`, `s${i}.example.com`);
      cache.setEndpoints("shop", `s${i}`, ["10.0.0.1"]);
    }
    const writer = recordingWriter(new MemoryStore().writer("east"), 2);
    const reconciler = createReconciler({
      cache,
      writer,
      cluster: "east",
      expose,
      valve: createSafetyValve(),
      logger: silentLogger,
      metrics: createSyncMetrics(),
      debounceMs: 5,
    });
    const enabling = reconciler.enable();
    for (let i = 0; i < 20; i++) {
      cache.setEndpoints("shop", `s${i}`, ["10.0.0.2"]);
      reconciler.markDirty("shop", `s${i}`);
    }
    await enabling;
    await reconciler.flush();
    await reconciler.fullResync();
    await reconciler.stop();
    expect(writer.maxConcurrent).toBe(1);
    const stored = await writer.load();
    expect(stored.size).toBe(20);
    for (const raw of stored.values()) expect(raw).toContain("10.0.0.2");
  });
});

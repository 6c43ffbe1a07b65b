import { afterEach, beforeEach, vi } from "vitest";
import { type Logger, silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { SCHEMA_VERSION, type ServiceRecord } from "../../../store/records.js";
import type { ClusterWriter } from "../../../store/store.js";
import { decodeStoredService } from "../../../store/stored-records.js";
import { createSyncMetrics, type SyncMetrics } from "../../../sync/metrics.js";
import { Reconciler } from "../../../sync/publish/reconciler.js";
import { SafetyValve } from "../../../sync/publish/safety-valve.js";
import type { KubeEndpointSlice, KubeService } from "../../../sync/translate/kube-objects.js";
import type { ClusterCache } from "../../../sync/translate/types.js";

/** A ClusterCache over plain objects, standing in for the informers. */
export class PlainCache implements ClusterCache {
  readonly #services = new Map<string, KubeService>();
  readonly #slices = new Map<string, KubeEndpointSlice[]>();

  setService(
    namespace: string,
    name: string,
    hosts: string | undefined,
    more: Record<string, string> = {},
  ): void {
    const annotations: Record<string, string> = {
      ...(hosts === undefined ? {} : { "edgeslice.io/hosts": hosts }),
      ...more,
    };
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
 * The version 1 record a sync not upgraded yet wrote for a Service (the hosts annotation exposes it, "!"
 * marks it malformed, endpoints are the slices' first addresses): what an upgraded sync finds in the store.
 */
export const expose = (
  cluster: string,
  service: KubeService,
  slices: readonly KubeEndpointSlice[],
):
  | { kind: "exposed"; record: ServiceRecord }
  | { kind: "not-exposed" }
  | { kind: "invalid"; reason: string } => {
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

export interface RecordingWriter extends ClusterWriter {
  readonly calls: string[];
  failNext: number;
  maxConcurrent: number;
}

export function recordingWriter(inner: ClusterWriter, delayMs = 0): RecordingWriter {
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
    put: (record) => guard(`put v1 ${record.service}`, () => inner.put(record)),
    remove: (service) => guard(`remove v1 ${service}`, () => inner.remove(service)),
    putService: (record) => guard(`put ${record.service}`, () => inner.putService(record)),
    removeService: (service) => guard(`remove ${service}`, () => inner.removeService(service)),
    putRoute: (route) => guard(`put route ${route.id}`, () => inner.putRoute(route)),
    removeRoute: (id) => guard(`remove route ${id}`, () => inner.removeRoute(id)),
    load: () => guard("load services", () => inner.load()),
    loadAll: () => guard("load", () => inner.loadAll()),
    heartbeat: (beat) => inner.heartbeat(beat),
  };
  return writer;
}

/** The IPv4 endpoints the stored record of `service` serves on port 80 (either schema version). */
export function endpointsIn(writer: ClusterWriter, service: string): Promise<string[] | undefined> {
  return writer.load().then((stored) => {
    const raw = stored.get(service);
    if (raw === undefined) return undefined;
    const decoded = decodeStoredService(writer.cluster, service, raw);
    const port = decoded?.record.ports.find((each) => each.number === 80);
    return port?.ipv4.endpoints.map((e) => e.ip);
  });
}

/** What a reconciler test works on; `build` makes the reconciler (and its recording writer) for the test. */
export interface ReconcilerWorld {
  readonly cache: PlainCache;
  readonly store: MemoryStore;
  readonly metrics: SyncMetrics;
  readonly writer: RecordingWriter;
  readonly reconciler: Reconciler;
  build(overrides?: { holdMs?: number; writeDelayMs?: number; logger?: Logger }): Reconciler;
  /** What the informers report for an event of the Service object itself: its record and every route. */
  serviceChanged(namespace: string, name: string): void;
}

/**
 * Registers the hooks of a reconciler test on fake timers: before each, a cache holding shop/web (exposed,
 * 10.0.0.1 and 10.0.0.2) and shop/internal (not exposed) over an empty MemoryStore; after each, the
 * reconciler is stopped.
 */
export function reconcilerWorld(): ReconcilerWorld {
  let cache: PlainCache | undefined;
  let store: MemoryStore | undefined;
  let metrics: SyncMetrics | undefined;
  let writer: RecordingWriter | undefined;
  let reconciler: Reconciler | undefined;
  const made = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`${what} exists only inside a test (after build() for the reconciler)`);
    return value;
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
    await reconciler?.stop();
    reconciler = undefined;
    vi.useRealTimers();
  });

  return {
    get cache() {
      return made(cache, "the cache");
    },
    get store() {
      return made(store, "the store");
    },
    get metrics() {
      return made(metrics, "the metrics");
    },
    get writer() {
      return made(writer, "the writer");
    },
    get reconciler() {
      return made(reconciler, "the reconciler");
    },
    serviceChanged(namespace, name) {
      const built = made(reconciler, "the reconciler");
      built.markDirty(namespace, name);
      built.markRoutesDirty();
    },
    build(overrides = {}) {
      writer = recordingWriter(made(store, "the store").writer("east"), overrides.writeDelayMs);
      reconciler = new Reconciler({
        cache: made(cache, "the cache"),
        writer,
        cluster: "east",
        valve: new SafetyValve({ maxLossFraction: 0.5, minLoss: 2, holdMs: overrides.holdMs ?? 30_000 }),
        logger: overrides.logger ?? silentLogger,
        metrics: made(metrics, "the metrics"),
        debounceMs: 50,
        maxWaitMs: 500,
        retryBaseMs: 100,
        retryMaxMs: 1_000,
      });
      return reconciler;
    },
  };
}

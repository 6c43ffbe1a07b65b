import { MemoryStore } from "../../store/memory-store.js";
import { type EndpointRecord, SCHEMA_VERSION } from "../../store/records.js";

/** The store a metrics scrape is measured over: `clusters` × `services` Services of `endpoints` each. */
export interface MetricsStoreSize {
  readonly clusters: number;
  readonly services: number;
  readonly endpoints: number;
}

export function endpointsOf(size: MetricsStoreSize): number {
  return size.clusters * size.services * size.endpoints;
}

/**
 * Every endpoint a distinct loopback address (127.0.0.1 and up, through 127.255.255.254), so no record names
 * an address off this machine; nothing connects to them, since no request asks for these hosts. Fresh for a day.
 */
export async function benchStore(size: MetricsStoreSize): Promise<MemoryStore> {
  const store = new MemoryStore();
  let next = 1;
  const endpoint = (): EndpointRecord => {
    const n = next++;
    return { ip: `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, port: 8080 };
  };
  if (endpointsOf(size) >= 2 ** 24 - 2) throw new Error("more endpoints than 127.0.0.0/8 has addresses");
  for (let c = 0; c < size.clusters; c++) {
    const cluster = `cluster-${c}`;
    const writer = store.writer(cluster);
    for (let s = 0; s < size.services; s++) {
      await writer.put({
        v: SCHEMA_VERSION,
        cluster,
        service: `bench-${s % 100}/service-${s}`,
        hosts: [`service-${s}.${cluster}.bench.test`],
        pathPrefix: "/",
        port: { name: "http", number: 80 },
        ipv4: { endpoints: Array.from({ length: size.endpoints }, endpoint), fallback: false, draining: [] },
        ipv6: { endpoints: [], fallback: false, draining: [] },
      });
    }
    await writer.heartbeat({ holder: "bench", leaseMs: 24 * 3600 * 1000, at: Date.now() });
  }
  return store;
}

import type { Redis } from "ioredis";
import { annotationRoute } from "../../store/legacy.js";
import { type EndpointRecord, SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceRecordFromV1 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";

/**
 * The store the Workers bench reads: one cluster of `services` Services with `endpointsPerService` IPv4
 * endpoints each, written by the real writer in store format 2 as the sync writes it (a service record and its
 * route record with the route's host index members), plus the cluster's heartbeat so readers discover it. The
 * addresses are data only (10.0.0.0/8): nothing in this bench connects to them.
 */
export const BENCH_CLUSTER = "bench";
const NAMESPACE = "bench";
/** Long enough that the lease never expires during a run (the cluster would turn stale). */
const LEASE_MS = 3_600_000;
const WRITE_CONCURRENCY = 64;

export interface BenchStore {
  readonly services: number;
  /** The host a request for Service `index` carries. */
  hostOf(index: number): string;
  /**
   * Replaces the first endpoint of Service `index` with an address no earlier change used, through the
   * writer (service record and change entry, as the sync does). Resolves the new address.
   */
  changeOne(index: number): Promise<string>;
}

export function hostOf(index: number): string {
  return `svc-${index}.bench.example`;
}

/** 10.<hi>.<lo>.<k+1>: unique per (service, endpoint) up to 65,536 Services. */
function initialAddress(index: number, endpoint: number): string {
  return `10.${(index >> 8) & 255}.${index & 255}.${endpoint + 1}`;
}

/** From 10.255.0.0/16, which initialAddress never reaches below 65,280 Services. */
function changedAddress(change: number): string {
  return `10.255.${(change >> 8) & 255}.${change & 255}`;
}

function recordOf(index: number, addresses: readonly string[]): ServiceRecord {
  const endpoints: EndpointRecord[] = addresses.map((ip, k) => ({
    ip,
    port: 8080,
    zone: k % 2 === 0 ? "zone-a" : "zone-b",
  }));
  return {
    v: SCHEMA_VERSION,
    cluster: BENCH_CLUSTER,
    service: `${NAMESPACE}/svc-${index}`,
    hosts: [hostOf(index)],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints, fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
}

/** Writes the store into `redis` (which the caller owns and emptied) under `prefix`. */
export async function writeBenchStore(
  redis: Redis,
  prefix: string,
  services: number,
  endpointsPerService: number,
): Promise<BenchStore> {
  const writer: ClusterWriter = createRedisWriter(redis, { prefix, cluster: BENCH_CLUSTER });
  const addresses = Array.from({ length: services }, (_, index) =>
    Array.from({ length: endpointsPerService }, (_, endpoint) => initialAddress(index, endpoint)),
  );
  for (let start = 0; start < services; start += WRITE_CONCURRENCY) {
    const batch = addresses.slice(start, start + WRITE_CONCURRENCY);
    await Promise.all(
      batch.map(async (list, offset) => {
        const record = recordOf(start + offset, list);
        await writer.putService(serviceRecordFromV1(record));
        await writer.putRoute(annotationRoute(record));
      }),
    );
  }
  await writer.heartbeat({ holder: "bench", leaseMs: LEASE_MS, at: Date.now() });
  let changes = 0;
  return {
    services,
    hostOf,
    async changeOne(index) {
      const list = addresses[index];
      if (!list) throw new Error(`no Service ${index}`);
      const address = changedAddress(changes++);
      list[0] = address;
      await writer.putService(serviceRecordFromV1(recordOf(index, list)));
      return address;
    },
  };
}

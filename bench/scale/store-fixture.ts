import type { Redis } from "ioredis";
import { annotationRoute } from "../../store/legacy.js";
import { type EndpointRecord, SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceRecordFromV1 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";
import { changedAddress, endpointAddress } from "./addresses.js";

/**
 * A router's store at scale: `clusters` clusters of `servicesPerCluster` Services of `endpointsPerService`
 * endpoints, written by the real writer in store format 2 as the sync writes it (service record, route record
 * and host index), each cluster with a heartbeat whose lease outlives the run. Addresses are loopback data
 * (addresses.ts); the parent keeps no copy of them, a change rebuilds its record from the numbering.
 */
export interface ScaleStoreShape {
  readonly prefix: string;
  readonly clusters: number;
  readonly servicesPerCluster: number;
  readonly endpointsPerService: number;
}

export interface ScaleStore extends ScaleStoreShape {
  readonly services: number;
  readonly endpoints: number;
  clusterName(cluster: number): string;
  hostOf(cluster: number, index: number): string;
  /** Replaces the first endpoint of one Service through the writer; resolves the new address. */
  changeOne(cluster: number, index: number): Promise<string>;
}

/**
 * A namespace per cluster: the route ids (`annotation:<ns>/<name>`) hold no cluster name, so one namespace in
 * every cluster would make each id one route published with ten different definitions (the hosts differ),
 * served from one cluster only (core/routes/clusters.ts): a table of a tenth of the Services, and a conflict each.
 */
const namespaceOf = (cluster: number) => `scale-c${cluster}`;
const LEASE_MS = 3_600_000;
const WRITES_IN_FLIGHT = 256;

export async function writeScaleStore(redis: Redis, shape: ScaleStoreShape): Promise<ScaleStore> {
  const clusterName = (cluster: number) => `c${cluster}`;
  const hostOf = (cluster: number, index: number) => `svc-${index}.${clusterName(cluster)}.scale.example`;
  const writers: ClusterWriter[] = Array.from({ length: shape.clusters }, (_, cluster) =>
    createRedisWriter(redis, { prefix: shape.prefix, cluster: clusterName(cluster) }),
  );
  const recordOf = (cluster: number, index: number, first?: string): ServiceRecord => {
    const base = (cluster * shape.servicesPerCluster + index) * shape.endpointsPerService;
    const endpoints: EndpointRecord[] = Array.from({ length: shape.endpointsPerService }, (_, k) => ({
      ip: k === 0 && first !== undefined ? first : endpointAddress(base + k),
      port: 8080,
      zone: k % 2 === 0 ? "zone-a" : "zone-b",
    }));
    return {
      v: SCHEMA_VERSION,
      cluster: clusterName(cluster),
      service: `${namespaceOf(cluster)}/svc-${index}`,
      hosts: [hostOf(cluster, index)],
      pathPrefix: "/",
      port: { name: "http", number: 80 },
      ipv4: { endpoints, fallback: false, draining: [] },
      ipv6: { endpoints: [], fallback: false, draining: [] },
    };
  };
  const total = shape.clusters * shape.servicesPerCluster;
  for (let start = 0; start < total; start += WRITES_IN_FLIGHT) {
    const batch: Promise<void>[] = [];
    for (let n = start; n < Math.min(total, start + WRITES_IN_FLIGHT); n++) {
      const cluster = Math.floor(n / shape.servicesPerCluster);
      const writer = writers[cluster];
      if (!writer) continue;
      const record = recordOf(cluster, n % shape.servicesPerCluster);
      batch.push(
        (async () => {
          await writer.putService(serviceRecordFromV1(record));
          await writer.putRoute(annotationRoute(record));
        })(),
      );
    }
    await Promise.all(batch);
  }
  for (const writer of writers)
    await writer.heartbeat({ holder: "bench", leaseMs: LEASE_MS, at: Date.now() });
  let changes = 0;
  return {
    ...shape,
    services: total,
    endpoints: total * shape.endpointsPerService,
    clusterName,
    hostOf,
    async changeOne(cluster, index) {
      const writer = writers[cluster];
      if (!writer) throw new Error(`no cluster ${cluster}`);
      const address = changedAddress(changes++);
      await writer.putService(serviceRecordFromV1(recordOf(cluster, index, address)));
      return address;
    },
  };
}

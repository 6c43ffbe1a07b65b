import { matchRequest } from "../../functions/core/routing.js";
import type { Selection } from "../../functions/core/selection/selection.js";
import {
  backendCandidates,
  type SelectPolicy,
  selectTiers,
} from "../../functions/core/selection/selector.js";
import { buildSnapshotRoutes } from "../../functions/core/snapshot/snapshot-routes.js";
import type { MemoryStore } from "../../store/memory-store.js";
import { type EndpointRecord, SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import type { RouteRecord } from "../../store/routes.js";
import type { ServiceRecordV2 } from "../../store/services.js";
import type { ClusterView, Snapshot } from "../../store/store.js";
import {
  clusterView,
  type DecodedService,
  fromV1,
  NO_RECORDS,
  updatedRecords,
} from "../../store/stored-records.js";

/** A ServiceRecord with only what a test cares about filled in. */
export function serviceRecord(options: {
  cluster: string;
  service?: string;
  hosts?: string[];
  pathPrefix?: string;
  ipv4?: EndpointRecord[];
  ipv6?: EndpointRecord[];
  ipv4Fallback?: boolean;
  ipv6Fallback?: boolean;
}): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster: options.cluster,
    service: options.service ?? "default/app",
    hosts: options.hosts ?? ["app.example"],
    pathPrefix: options.pathPrefix ?? "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: options.ipv4 ?? [], fallback: options.ipv4Fallback ?? false, draining: [] },
    ipv6: { endpoints: options.ipv6 ?? [], fallback: options.ipv6Fallback ?? false, draining: [] },
  };
}

/** One cluster of a hand-built snapshot: version 1 records, or version 2 services and routes, or both. */
export interface ClusterFixture {
  name: string;
  stale?: boolean;
  records?: ServiceRecord[];
  services?: ServiceRecordV2[];
  routes?: RouteRecord[];
}

/** A snapshot as a router's source would decode it (store/stored-records.ts), without serialising. */
export function snapshotOf(clusters: ClusterFixture[], version = 1): Snapshot {
  const views: ClusterView[] = clusters.map((cluster) => {
    const services = new Map<string, DecodedService>();
    for (const record of cluster.records ?? []) services.set(record.service, fromV1(record));
    for (const record of cluster.services ?? []) services.set(record.service, { record, v1: undefined });
    const routes = new Map((cluster.routes ?? []).map((route) => [route.id, route]));
    return clusterView(cluster.name, cluster.stale ?? false, updatedRecords(NO_RECORDS, services, routes));
  });
  return { version, clusters: views };
}

export function ep(ip: string, port = 8080, extra: Partial<EndpointRecord> = {}): EndpointRecord {
  return { ip, port, ...extra };
}

/** The serviceRecord endpoint field for one backend listening on `host` (::1 → ipv6, else ipv4). */
export function endpointOn(backend: { host: string; port: number }): {
  ipv4?: EndpointRecord[];
  ipv6?: EndpointRecord[];
} {
  const endpoints = [ep(backend.host, backend.port)];
  return backend.host === "::1" ? { ipv6: endpoints } : { ipv4: endpoints };
}

/** Puts the record into the memory store and keeps its cluster fresh for `leaseMs`. */
export async function publish(store: MemoryStore, record: ServiceRecord, leaseMs = 60_000): Promise<void> {
  const writer = store.writer(record.cluster);
  await writer.put(record);
  await writer.heartbeat({ holder: "test", leaseMs, at: Date.now() });
}

/** The selection a GET to `host` + `path` gets: the winning rule's first backend (routing.ts, select.ts). */
export function selectionFor(
  snapshot: Snapshot,
  policy: SelectPolicy,
  host = "app.example",
  path = "/",
): Selection {
  const found = matchRequest(buildSnapshotRoutes(snapshot), host, {
    path,
    method: "GET",
    headers: new Headers(),
  });
  const ref = found?.rule.backends[0];
  if (!found || !ref || !("service" in ref)) throw new Error(`fixture does not route ${host}${path}`);
  return selectTiers(ref.service, backendCandidates(found.entry, ref.service, ref.port), policy);
}

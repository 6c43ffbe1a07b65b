import { PersistentMap } from "../lib/persistent-map.js";
import type { WarnOnce } from "../lib/warn-once.js";
import { annotationRoute } from "./legacy.js";
import {
  parseRecordJson,
  SCHEMA_VERSION,
  type ServiceRecord,
  ServiceRecordSchema,
  validated,
} from "./records.js";
import { type RouteRecord, RouteRecordSchema } from "./routes.js";
import { newerVersionOf, reportNewerVersion } from "./schema-version.js";
import { type ServiceRecordV2, ServiceRecordV2Schema, serviceRecordFromV1 } from "./services.js";
import { withReadableSteering } from "./steering.js";
import type { ClusterView } from "./store.js";

/**
 * One cluster's stored records decoded for routers, whatever schema version each was written in: the
 * `services` hash (version 2 records, or version 1 records of a sync not upgraded yet) and the `routes` hash
 * (version 2 route records, keyed by route id). A version 1 record stands for its annotation route too
 * (legacy.ts); a version 1 sync's own `routes` values (keyed by service) are not read: they say nothing its
 * service records do not. Every reader (the Redis snapshot and source, MemoryStore) decodes through here.
 *
 * What cannot be served is skipped and reported through `warnings` (lib/warn-once.ts) when one is given: an
 * invalid record once while it stays invalid, a newer schema version once per cluster and version.
 */
export interface ClusterRecords {
  /** Every valid service record as version 2, by `ns/name`. */
  readonly servicesV2: PersistentMap<ServiceRecordV2>;
  /** The valid version 1 records among them, as stored. */
  readonly services: PersistentMap<ServiceRecord>;
  /** Valid version 2 route records of the `routes` hash, by id. */
  readonly routes: PersistentMap<RouteRecord>;
  /** The annotation route of each version 1 service record, by service. */
  readonly legacyRoutes: PersistentMap<RouteRecord>;
}

/** A decoded service record as version 2; a version 1 record also as stored, with the route it stands for. */
export interface DecodedService {
  readonly record: ServiceRecordV2;
  readonly v1: { readonly record: ServiceRecord; readonly route: RouteRecord } | undefined;
}

export const NO_RECORDS: ClusterRecords = {
  servicesV2: PersistentMap.empty(),
  services: PersistentMap.empty(),
  routes: PersistentMap.empty(),
  legacyRoutes: PersistentMap.empty(),
};

/** One `services` hash value; undefined (reported) when it cannot be served. */
export function decodeStoredService(
  cluster: string,
  service: string,
  raw: string,
  warnings?: WarnOnce,
): DecodedService | undefined {
  const problem = `record ${cluster} ${service}`;
  const parsed = parseRecordJson(raw);
  const newer = parsed.ok ? newerVersionOf(parsed.value) : undefined;
  if (newer !== undefined) {
    reportNewerVersion(warnings, cluster, newer, { service });
    return undefined;
  }
  const version = parsed.ok ? (parsed.value as { v?: unknown } | null)?.v : undefined;
  const readable = parsed.ok && version !== SCHEMA_VERSION ? withReadableSteering(parsed.value) : undefined;
  const decoded = !parsed.ok
    ? parsed
    : version === SCHEMA_VERSION
      ? validated<ServiceRecord | ServiceRecordV2>(ServiceRecordSchema, parsed.value)
      : validated<ServiceRecord | ServiceRecordV2>(ServiceRecordV2Schema, readable?.record);
  let reason: string | undefined;
  if (!decoded.ok) reason = decoded.error;
  else if (decoded.value.cluster !== cluster) reason = `record names cluster "${decoded.value.cluster}"`;
  else if (decoded.value.service !== service) reason = `record names service "${decoded.value.service}"`;
  if (reason === undefined && decoded.ok) {
    warnings?.clear(problem);
    reportSteering(warnings, cluster, service, readable?.problem);
    const record = decoded.value;
    return record.v === SCHEMA_VERSION ? fromV1(record) : { record, v1: undefined };
  }
  warnings?.warn(problem, reason ?? "", "skipping invalid service record", { cluster, service, reason });
  return undefined;
}

/** A record's steering left out (the Service serves with CLUSTER_STEERING): said once while it lasts. */
function reportSteering(
  warnings: WarnOnce | undefined,
  cluster: string,
  service: string,
  reason: string | undefined,
): void {
  const problem = `steering ${cluster} ${service}`;
  if (reason === undefined) warnings?.clear(problem);
  else {
    warnings?.warn(problem, reason, "ignoring a service record's steering this router cannot read", {
      cluster,
      service,
      reason,
    });
  }
}

/** A valid version 1 record as routers serve it: converted, with the route it stands for. */
export function fromV1(record: ServiceRecord): DecodedService {
  return { record: serviceRecordFromV1(record), v1: { record, route: annotationRoute(record) } };
}

/** One `routes` hash value; undefined when it cannot be served (reported) or is a version 1 sync's (not read). */
export function decodeStoredRoute(
  cluster: string,
  id: string,
  raw: string,
  warnings?: WarnOnce,
): RouteRecord | undefined {
  const problem = `route ${cluster} ${id}`;
  const parsed = parseRecordJson(raw);
  const newer = parsed.ok ? newerVersionOf(parsed.value) : undefined;
  if (newer !== undefined) {
    reportNewerVersion(warnings, cluster, newer, { route: id });
    return undefined;
  }
  if (parsed.ok && (parsed.value as { v?: unknown } | null)?.v === SCHEMA_VERSION) {
    warnings?.clear(problem);
    return undefined;
  }
  const decoded = parsed.ok ? validated(RouteRecordSchema, parsed.value) : parsed;
  let reason: string | undefined;
  if (!decoded.ok) reason = decoded.error;
  else if (decoded.value.id !== id) reason = `record names route "${decoded.value.id}"`;
  if (reason === undefined && decoded.ok) {
    warnings?.clear(problem);
    return decoded.value;
  }
  warnings?.warn(problem, reason ?? "", "skipping invalid route record", { cluster, route: id, reason });
  return undefined;
}

/** Both hashes of one cluster, read whole. */
export function decodeClusterRecords(
  cluster: string,
  services: Iterable<readonly [string, string]>,
  routes: Iterable<readonly [string, string]>,
  warnings?: WarnOnce,
): ClusterRecords {
  const decodedServices = new Map<string, DecodedService | undefined>();
  for (const [service, raw] of services) {
    decodedServices.set(service, decodeStoredService(cluster, service, raw, warnings));
  }
  const decodedRoutes = new Map<string, RouteRecord | undefined>();
  for (const [id, raw] of routes) decodedRoutes.set(id, decodeStoredRoute(cluster, id, raw, warnings));
  return updatedRecords(NO_RECORDS, decodedServices, decodedRoutes);
}

/**
 * `records` with some services and routes read again: a decoded value replaces, undefined removes (the
 * record is gone, or can no longer be served). The maps are persistent (lib/persistent-map.ts): the result
 * shares every record not named with `records`, so a change costs what it names, not the cluster's size.
 */
export function updatedRecords(
  records: ClusterRecords,
  services: ReadonlyMap<string, DecodedService | undefined>,
  routes: ReadonlyMap<string, RouteRecord | undefined>,
): ClusterRecords {
  const v2: [string, ServiceRecordV2 | undefined][] = [];
  const v1: [string, ServiceRecord | undefined][] = [];
  const legacy: [string, RouteRecord | undefined][] = [];
  for (const [service, decoded] of services) {
    v2.push([service, decoded?.record]);
    if (decoded?.v1 || records.services.has(service)) v1.push([service, decoded?.v1?.record]);
    if (decoded?.v1 || records.legacyRoutes.has(service)) legacy.push([service, decoded?.v1?.route]);
  }
  return {
    servicesV2: v2.length > 0 ? records.servicesV2.withChanges(v2) : records.servicesV2,
    services: v1.length > 0 ? records.services.withChanges(v1) : records.services,
    routes: routes.size > 0 ? records.routes.withChanges(routes) : records.routes,
    legacyRoutes: legacy.length > 0 ? records.legacyRoutes.withChanges(legacy) : records.legacyRoutes,
  };
}

/**
 * What routers see of one cluster: its service records and every route it publishes, stored (version 2)
 * or standing for a version 1 record; a stored route wins over a derived one with the same id. Given the
 * view `previous` was built from `before`, only the routes whose records changed are looked at again.
 */
export function clusterView(
  name: string,
  stale: boolean,
  records: ClusterRecords,
  previous?: { readonly view: ClusterView; readonly records: ClusterRecords },
): ClusterView {
  const base = { name, stale, servicesV2: records.servicesV2, services: records.services };
  if (records.legacyRoutes.size === 0) return { ...base, routes: records.routes };
  const before = previous?.records;
  const previousRoutes = previous?.view.routes;
  if (before && before.legacyRoutes.size > 0 && previousRoutes instanceof PersistentMap) {
    const ids = new Set(PersistentMap.changedKeys(before.routes, records.routes));
    const legacyById = new Map<string, RouteRecord>();
    for (const service of PersistentMap.changedKeys(before.legacyRoutes, records.legacyRoutes)) {
      const old = before.legacyRoutes.get(service);
      const now = records.legacyRoutes.get(service);
      if (old) ids.add(old.id);
      if (now) {
        ids.add(now.id);
        legacyById.set(now.id, now);
      }
    }
    const changes: [string, RouteRecord | undefined][] = [];
    for (const id of ids) {
      const stored = records.routes.get(id);
      // A derived route whose service did not change is found only by a walk; rare enough (a version 2
      // route removed over a version 1 record of the same id) to rebuild the view for.
      if (!stored && !legacyById.has(id) && previousRoutes.has(id)) return wholeView(base, records);
      changes.push([id, stored ?? legacyById.get(id)]);
    }
    return { ...base, routes: previousRoutes.withChanges(changes) };
  }
  return wholeView(base, records);
}

function wholeView(base: Omit<ClusterView, "routes">, records: ClusterRecords): ClusterView {
  const merged: [string, RouteRecord][] = [];
  for (const route of records.legacyRoutes.values()) merged.push([route.id, route]);
  for (const entry of records.routes) merged.push(entry);
  return { ...base, routes: PersistentMap.from(merged) };
}

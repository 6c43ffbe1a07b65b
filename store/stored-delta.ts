import type { RouteRecord } from "./routes.js";
import type { ClusterView } from "./store.js";
import {
  type ClusterRecords,
  clusterView,
  type DecodedService,
  decodeClusterRecords,
  decodeStoredRoute,
  decodeStoredService,
  updatedRecords,
} from "./stored-records.js";

/** One cluster's records decoded for routers, and the view built from them (stored-records.ts). */
export interface DecodedCluster {
  readonly records: ClusterRecords;
  readonly view: ClusterView;
}

/**
 * A cluster's stored hashes decoded, given what was decoded before and the services and routes written since:
 * only those are decoded again, and the persistent maps share the rest (docs/design.md "Cost per change").
 * Without `previous`, everything is. The view is built fresh (not stale); the caller sets staleness.
 */
export function decodedAfterChanges(
  name: string,
  hashes: { readonly records: ReadonlyMap<string, string>; readonly routes: ReadonlyMap<string, string> },
  previous: DecodedCluster | undefined,
  services: ReadonlySet<string>,
  routes: ReadonlySet<string>,
): DecodedCluster {
  if (!previous) {
    const records = decodeClusterRecords(name, hashes.records, hashes.routes);
    return { records, view: clusterView(name, false, records) };
  }
  if (services.size === 0 && routes.size === 0) return previous;
  const decodedServices = new Map<string, DecodedService | undefined>();
  for (const service of services) {
    const raw = hashes.records.get(service);
    decodedServices.set(service, raw === undefined ? undefined : decodeStoredService(name, service, raw));
  }
  const decodedRoutes = new Map<string, RouteRecord | undefined>();
  for (const id of routes) {
    const raw = hashes.routes.get(id);
    decodedRoutes.set(id, raw === undefined ? undefined : decodeStoredRoute(name, id, raw));
  }
  const records = updatedRecords(previous.records, decodedServices, decodedRoutes);
  return { records, view: clusterView(name, previous.view.stale, records, previous) };
}

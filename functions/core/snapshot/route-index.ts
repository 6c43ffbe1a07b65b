import type { IpFamily } from "../../../lib/ip.js";
import type { FamilyRecord } from "../../../store/records.js";
import type { Snapshot } from "../../../store/store.js";
import { normaliseHost } from "../http/hosts.js";
import { matchRequest } from "../routing.js";
import { backendCandidates } from "../selection/selector.js";
import type { SnapshotRoutes } from "./served-routes.js";
import { buildSnapshotRoutes, snapshotRoutesOf } from "./snapshot-routes.js";

/**
 * A GET's destination by host and path, for code outside the router that only asks where a host goes
 * (envtest, the Workers bench). Not an index of its own: it looks up the router's route table
 * (snapshot-routes.ts) the way a request without headers would.
 */
export type RouteIndex = SnapshotRoutes;

/** The served clusters' backends of the winning rule's first backendRef. */
export interface RouteEntry {
  /** The route that matched. */
  readonly id: string;
  readonly serving: readonly {
    readonly cluster: string;
    readonly stale: boolean;
    readonly record: { readonly service: string } & Readonly<Record<IpFamily, FamilyRecord>>;
  }[];
}

export function routeIndexOf(snapshot: Snapshot): RouteIndex {
  return snapshotRoutesOf(snapshot);
}

export function buildRouteIndex(snapshot: Snapshot): RouteIndex {
  return buildSnapshotRoutes(snapshot);
}

export function lookupRoute(index: RouteIndex, host: string, path: string): RouteEntry | undefined {
  const normalised = normaliseHost(host);
  if (normalised === undefined) return undefined;
  const found = matchRequest(index, normalised, { path, method: "GET", headers: new Headers() });
  const backend = found?.rule.backends.find((ref) => "service" in ref);
  if (!found || !backend || !("service" in backend)) return undefined;
  return {
    id: found.route.id,
    serving: backendCandidates(found.entry, backend.service, backend.port).map((candidate) => ({
      cluster: candidate.cluster,
      stale: candidate.stale,
      record: { service: candidate.service, ...candidate.backends },
    })),
  };
}

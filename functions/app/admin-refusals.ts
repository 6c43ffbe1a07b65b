import type { SnapshotRoutes } from "../core/snapshot/served-routes.js";
import { hostPatternCovers } from "../core/trust/cluster-grants.js";
import type { GrantRefusal } from "../core/trust/granted-clusters.js";

/**
 * What the router refused that bears on one request, for `/_edgeslice/explain`: every cluster CLUSTER_GRANTS
 * does not list, routes of other clusters that named the host, endpoints left out of the Services the matched
 * route sends to, and every cluster's records and changes refused by its budget.
 */
export function refusalsFor(
  routes: SnapshotRoutes,
  host: string | undefined,
  routeId: string | undefined,
): GrantRefusal[] {
  if (routes.refusals.length === 0) return [];
  const served = routeId === undefined ? undefined : routes.routes.find((each) => each.route.id === routeId);
  const services = new Set<string>();
  for (const rule of served?.route.rules ?? []) {
    for (const ref of rule.backends) if ("service" in ref) services.add(ref.service);
  }
  const clusters = new Set(served?.clusters.map((view) => view.name));
  return routes.refusals.filter((refusal) => {
    if (refusal.kind === "route") {
      return host !== undefined && refusal.refused.some((pattern) => hostPatternCovers(pattern, host));
    }
    if (refusal.kind === "endpoints") return services.has(refusal.id) && clusters.has(refusal.cluster);
    return true;
  });
}

/** One refusal in words, for the `why` list of explain. */
export function describeRefusal(refusal: GrantRefusal): string {
  switch (refusal.kind) {
    case "cluster":
      return `CLUSTER_GRANTS does not list cluster ${refusal.cluster}: its ${refusal.count} routes and services are ignored`;
    case "route":
      return `CLUSTER_GRANTS refused ${refusal.cluster}'s route ${refusal.id}: ${refusal.cluster} is not granted ${refusal.refused.join(", ")}`;
    case "endpoints":
      return `CLUSTER_GRANTS left out ${refusal.count} endpoints of ${refusal.id} in ${refusal.cluster} outside its networks (${refusal.refused.join(", ")}${refusal.count > refusal.refused.length ? ", ..." : ""})`;
    case "records":
      return `${refusal.cluster}'s budget refused ${refusal.count} of its records: ${refusal.refused.join("; ")}${refusal.count > refusal.refused.length ? "; ..." : ""}`;
    case "changes":
      return `${refusal.cluster}'s change stream runs faster than CLUSTER_MAX_CHANGES_PER_SECOND: its changes are applied at that rate`;
  }
}

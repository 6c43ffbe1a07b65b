import type { RouteRecord } from "../../../store/routes.js";

/** One cluster's copy of a route record. */
export interface PublishedRoute {
  readonly cluster: string;
  readonly route: RouteRecord;
}

/**
 * A route object as the router serves it: one definition, and every cluster that publishes exactly that
 * definition. Each backend of its rules gets the endpoints of that Service port in each of these clusters.
 */
export interface MergedRoute {
  readonly route: RouteRecord;
  readonly clusters: readonly string[];
}

/** Clusters that publish the same route id with another definition than the one served. */
export interface RouteConflict {
  readonly id: string;
  readonly served: readonly string[];
  readonly shadowed: readonly string[];
}

/**
 * Several clusters publish the same route id when the same HTTPRoute, Ingress or annotated Service is
 * applied to each of them (ids hold no cluster name). Identical definitions (creation times aside) merge
 * into one route served from all of them, ranked by the oldest copy's creation time. Different definitions
 * (a rollout in progress, drift) cannot be merged rule by rule, so one wins: the definition most clusters
 * publish, ties to the one whose first cluster sorts first; the other clusters' copies are reported and add
 * no endpoints. Pass only the clusters that may serve (fresh, or all when every one is stale).
 * Deterministic whatever the input order; output sorted by id.
 */
export function mergeAcrossClusters(published: readonly PublishedRoute[]): {
  routes: MergedRoute[];
  conflicts: RouteConflict[];
} {
  const byId = new Map<string, PublishedRoute[]>();
  for (const publication of published) {
    const copies = byId.get(publication.route.id);
    if (copies) copies.push(publication);
    else byId.set(publication.route.id, [publication]);
  }
  const routes: MergedRoute[] = [];
  const conflicts: RouteConflict[] = [];
  for (const id of [...byId.keys()].sort(byCodeUnits)) {
    const copies = byId.get(id) ?? [];
    const [only] = copies;
    // The usual case, one cluster per id: nothing to compare.
    if (copies.length === 1 && only) {
      routes.push({ route: only.route, clusters: [only.cluster] });
      continue;
    }
    const definitions = new Map<string, { route: RouteRecord; clusters: string[] }>();
    for (const { cluster, route } of copies) {
      const key = definitionKey(route);
      const definition = definitions.get(key);
      if (!definition) definitions.set(key, { route, clusters: [cluster] });
      else {
        definition.clusters.push(cluster);
        // The oldest copy's age ranks the merged route, whatever the order the clusters came in.
        if (route.createdAt < definition.route.createdAt) definition.route = route;
      }
    }
    const ranked = [...definitions.values()].map((definition) => ({
      route: definition.route,
      clusters: [...new Set(definition.clusters)].sort(byCodeUnits),
    }));
    ranked.sort(
      (a, b) =>
        b.clusters.length - a.clusters.length || byCodeUnits(a.clusters[0] ?? "", b.clusters[0] ?? ""),
    );
    const [served, ...others] = ranked;
    if (!served) continue;
    routes.push(served);
    if (others.length > 0) {
      conflicts.push({
        id,
        served: served.clusters,
        shadowed: others.flatMap((other) => other.clusters).sort(byCodeUnits),
      });
    }
  }
  return { routes, conflicts };
}

const definitionKeys = new WeakMap<RouteRecord, string>();

/**
 * What makes two copies the same definition: everything but `createdAt`, which is each cluster's own
 * metadata.creationTimestamp of the object (the same HTTPRoute applied to two clusters is created at two
 * times). canonicalJson, memoised on the record: a reader keeps unchanged records across snapshots.
 */
function definitionKey(route: RouteRecord): string {
  let key = definitionKeys.get(route);
  if (key === undefined) {
    key = canonicalJson({ ...route, createdAt: undefined });
    definitionKeys.set(route, key);
  }
  return key;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON with object keys sorted, so two writers that order keys differently still compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => byCodeUnits(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

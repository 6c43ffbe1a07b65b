import { byCodeUnits } from "../../../lib/code-unit-order.js";
import type { RouteRecord } from "../../../store/routes.js";

/** One cluster's copy of a route record. */
export interface PublishedRoute {
  readonly cluster: string;
  readonly route: RouteRecord;
  /** The cluster's lease ran out (default false). */
  readonly stale?: boolean;
}

/** One cluster that publishes a route id, and whether its copy is the one served. */
export interface RoutePublisher {
  readonly cluster: string;
  readonly stale: boolean;
  /** Traffic of this route may go to this cluster's backends. */
  readonly serving: boolean;
}

/**
 * A route object as the router serves it: one definition, and every cluster that publishes exactly that
 * definition. Each backend of its rules gets the endpoints of that Service port in each of these clusters.
 */
export interface MergedRoute {
  /** The definition served; its id gets `@<clusters>` when another definition is served beside it (see below). */
  readonly route: RouteRecord;
  /** The serving publishers, sorted. */
  readonly clusters: readonly string[];
  /** Every serving publisher is stale, and their last known backends are served anyway. */
  readonly failStatic: boolean;
  /** The serving publishers and those whose copies this definition took the place of, sorted. */
  readonly publishers: readonly RoutePublisher[];
}

/** Clusters that publish the same route id with another definition than the one served. */
export interface RouteConflict {
  readonly id: string;
  readonly served: readonly string[];
  readonly shadowed: readonly string[];
}

/**
 * Whether the clusters serving one definition may take the place of another definition of the same id (its
 * hostnames): under CLUSTER_GRANTS, only when they were granted every one of them.
 */
export type MayShadow = (clusters: readonly string[], route: RouteRecord) => boolean;

interface Definition {
  route: RouteRecord;
  clusters: string[];
  readonly stale: boolean;
}

interface Served extends Definition {
  readonly shadowed: string[];
  readonly droppedStale: string[];
}

/**
 * Several clusters publish the same route id when the same HTTPRoute, Ingress or annotated Service is
 * applied to each of them (ids hold no cluster name). Identical definitions (creation times aside) merge
 * into one route served from all of them, ranked by the oldest copy's creation time. Fresh copies take the
 * place of stale ones; when every copy is stale, those serve (fail static per route). Different definitions
 * (a rollout in progress, drift) cannot be merged rule by rule, so one wins: the definition most clusters
 * publish, ties to the one whose first cluster sorts first; the other clusters' copies are reported and add
 * no endpoints. A definition may only take the place of one whose hostnames its clusters could have published
 * themselves (`mayShadow`): otherwise both are served, each under `<id>@<its clusters>`, so a cluster cannot
 * take another's route away (nor its name) by publishing its id. Deterministic whatever the input order; output
 * sorted by id.
 */
export function mergeAcrossClusters(
  published: readonly PublishedRoute[],
  mayShadow: MayShadow = () => true,
): {
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
      const stale = only.stale === true;
      const publishers = [{ cluster: only.cluster, stale, serving: true }];
      routes.push({ route: only.route, clusters: [only.cluster], failStatic: stale, publishers });
      continue;
    }
    const served: Served[] = [];
    for (const definition of rankedDefinitions(copies)) {
      const over = served.find((candidate) => mayShadow(candidate.clusters, definition.route));
      if (!over) served.push({ ...definition, shadowed: [], droppedStale: [] });
      else if (definition.stale && !over.stale) over.droppedStale.push(...definition.clusters);
      else over.shadowed.push(...definition.clusters);
    }
    for (const definition of served) {
      const route =
        served.length === 1
          ? definition.route
          : { ...definition.route, id: `${id}@${definition.clusters.join(",")}` };
      routes.push({
        route,
        clusters: definition.clusters,
        failStatic: definition.stale,
        publishers: [
          ...definition.clusters.map((cluster) => ({ cluster, stale: definition.stale, serving: true })),
          ...definition.droppedStale.map((cluster) => ({ cluster, stale: true, serving: false })),
          ...definition.shadowed.map((cluster) => ({ cluster, stale: definition.stale, serving: false })),
        ].sort((a, b) => byCodeUnits(a.cluster, b.cluster)),
      });
      if (definition.shadowed.length > 0) {
        conflicts.push({
          id: route.id,
          served: definition.clusters,
          shadowed: [...definition.shadowed].sort(byCodeUnits),
        });
      }
    }
  }
  // Stable: a name given to a definition served apart (`<id>@<clusters>`) was pushed while its id was merged,
  // before any published id equal to it (which sorts after `<id>`), so the route table keeps the former.
  routes.sort((a, b) => byCodeUnits(a.route.id, b.route.id));
  return { routes, conflicts };
}

/**
 * The copies of one id grouped by definition and freshness, best first: fresh before stale, then the
 * definition most clusters publish, then the one whose first cluster sorts first.
 */
function rankedDefinitions(copies: readonly PublishedRoute[]): Definition[] {
  const definitions = new Map<string, Definition>();
  for (const { cluster, route, stale } of copies) {
    const key = `${stale === true ? "stale" : "fresh"} ${definitionKey(route)}`;
    const definition = definitions.get(key);
    if (!definition) definitions.set(key, { route, clusters: [cluster], stale: stale === true });
    else {
      definition.clusters.push(cluster);
      // The oldest copy's age ranks the merged route, whatever the order the clusters came in.
      if (route.createdAt < definition.route.createdAt) definition.route = route;
    }
  }
  const ranked = [...definitions.values()].map((definition) => ({
    ...definition,
    clusters: [...new Set(definition.clusters)].sort(byCodeUnits),
  }));
  return ranked.sort(
    (a, b) =>
      Number(a.stale) - Number(b.stale) ||
      b.clusters.length - a.clusters.length ||
      byCodeUnits(a.clusters[0] ?? "", b.clusters[0] ?? ""),
  );
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

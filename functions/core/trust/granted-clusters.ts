import { byCodeUnits } from "../../../lib/code-unit-order.js";
import { endpointAddress, type FamilyRecord } from "../../../store/records.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { ServiceRecordV2 } from "../../../store/services.js";
import type { ClusterView } from "../../../store/store.js";
import { type ClusterGrant, type ClusterGrants, hostsNotGranted, mayReach } from "./cluster-grants.js";

/**
 * What the router refused of one cluster's records. By CLUSTER_GRANTS:
 * - `cluster`: the cluster is not listed, so none of its routes and services is read (`id` is its name);
 * - `route`: a route naming a host the cluster was not granted (`id` the route id, `refused` those hosts);
 * - `endpoints`: endpoints of a Service outside the cluster's networks, left out of it (`id` the Service,
 *   `refused` the first few addresses, `count` all of them).
 * By the cluster's budget (budget-refusals.ts): `records` and `changes`.
 */
export interface GrantRefusal {
  readonly cluster: string;
  readonly kind: "cluster" | "route" | "endpoints" | "records" | "changes";
  readonly id: string;
  readonly refused: readonly string[];
  readonly count: number;
}

export interface GrantedClusters {
  /** The clusters as the router serves them: refused routes and endpoints left out. */
  readonly clusters: readonly ClusterView[];
  /** Sorted by cluster, kind and id. */
  readonly refusals: readonly GrantRefusal[];
}

/** Addresses a refusal names at most (its count says how many there were). */
export const REFUSED_ADDRESSES_SHOWN = 5;

interface GrantedView {
  readonly view: ClusterView;
  readonly refusals: readonly GrantRefusal[];
}

interface GrantedService {
  readonly record: ServiceRecordV2;
  readonly refused: readonly string[];
}

/**
 * Results memoised on the records, which a reader keeps across snapshots while unchanged: per cluster's grant,
 * since the same record object may stand in two clusters (what one may publish, another may not).
 */
interface GrantMemo {
  readonly routes: WeakMap<RouteRecord, readonly string[]>;
  readonly services: WeakMap<ServiceRecordV2, GrantedService>;
}

const views = new WeakMap<ClusterGrants, WeakMap<ClusterView, GrantedView>>();
const memos = new WeakMap<ClusterGrant, GrantMemo>();

/**
 * Applies CLUSTER_GRANTS to a snapshot's clusters, once per snapshot (never per request). Without grants the
 * clusters are served as they are.
 */
export function applyClusterGrants(
  clusters: readonly ClusterView[],
  grants: ClusterGrants | undefined,
): GrantedClusters {
  if (!grants) return { clusters, refusals: [] };
  let viewMemo = views.get(grants);
  if (!viewMemo) {
    viewMemo = new WeakMap();
    views.set(grants, viewMemo);
  }
  const granted: ClusterView[] = [];
  const refusals: GrantRefusal[] = [];
  for (const view of clusters) {
    let result = viewMemo.get(view);
    if (!result) {
      result = grantedView(view, grants.get(view.name));
      viewMemo.set(view, result);
    }
    granted.push(result.view);
    for (const refusal of result.refusals) refusals.push(refusal);
  }
  refusals.sort(
    (a, b) => byCodeUnits(a.cluster, b.cluster) || byCodeUnits(a.kind, b.kind) || byCodeUnits(a.id, b.id),
  );
  return { clusters: granted, refusals };
}

/**
 * Whether the clusters may all publish a route for these hostnames: the test a route copy passes to be served,
 * and the one a served definition passes to take the place of another cluster's definition of the same id.
 */
export function everyClusterGranted(
  grants: ClusterGrants,
  clusters: readonly string[],
  route: RouteRecord,
): boolean {
  return clusters.every((cluster) => hostsNotGranted(grants.get(cluster), route.hostnames).length === 0);
}

function grantedView(view: ClusterView, grant: ClusterGrant | undefined): GrantedView {
  if (!grant) {
    // A reader that knows the grants leaves such a cluster unread and only counts its records.
    const unread = view.budget?.unread === undefined ? 0 : view.budget.refusedCount;
    const count = view.routes.size + view.servicesV2.size + unread;
    if (count === 0) return { view, refusals: [] };
    const refusal: GrantRefusal = { cluster: view.name, kind: "cluster", id: view.name, refused: [], count };
    const empty = { ...view, routes: new Map(), servicesV2: new Map(), services: new Map() };
    return { view: empty, refusals: [refusal] };
  }
  let memo = memos.get(grant);
  if (!memo) {
    memo = { routes: new WeakMap(), services: new WeakMap() };
    memos.set(grant, memo);
  }
  const refusals: GrantRefusal[] = [];
  let routes: Map<string, RouteRecord> | undefined;
  for (const [id, route] of view.routes) {
    let refused = memo.routes.get(route);
    if (!refused) {
      refused = hostsNotGranted(grant, route.hostnames);
      memo.routes.set(route, refused);
    }
    if (refused.length === 0) continue;
    routes ??= new Map(view.routes);
    routes.delete(id);
    refusals.push({ cluster: view.name, kind: "route", id, refused, count: refused.length });
  }
  let servicesV2: Map<string, ServiceRecordV2> | undefined;
  for (const [id, record] of view.servicesV2) {
    let result = memo.services.get(record);
    if (!result) {
      result = grantedService(record, grant);
      memo.services.set(record, result);
    }
    if (result.record === record) continue;
    servicesV2 ??= new Map(view.servicesV2);
    servicesV2.set(id, result.record);
    refusals.push({
      cluster: view.name,
      kind: "endpoints",
      id,
      refused: result.refused.slice(0, REFUSED_ADDRESSES_SHOWN),
      count: result.refused.length,
    });
  }
  if (!routes && !servicesV2) return { view, refusals };
  // `services` (version 1 records as stored) is left as it is: routers read servicesV2, tools the stored form.
  return {
    view: { ...view, routes: routes ?? view.routes, servicesV2: servicesV2 ?? view.servicesV2 },
    refusals,
  };
}

/** The record without its endpoints outside the grant's networks (draining ones included); the same record when none is. */
function grantedService(record: ServiceRecordV2, grant: ClusterGrant): GrantedService {
  const refused: string[] = [];
  const keep = (family: FamilyRecord): FamilyRecord => {
    const endpoints = family.endpoints.filter((endpoint) => mayReach(grant, endpoint.ip));
    const draining = family.draining.filter((endpoint) => mayReach(grant, endpoint.ip));
    if (endpoints.length === family.endpoints.length && draining.length === family.draining.length)
      return family;
    for (const endpoint of [...family.endpoints, ...family.draining]) {
      if (!mayReach(grant, endpoint.ip)) refused.push(endpointAddress(endpoint));
    }
    return { ...family, endpoints, draining };
  };
  const ports = record.ports.map((port) => {
    const ipv4 = keep(port.ipv4);
    const ipv6 = keep(port.ipv6);
    return ipv4 === port.ipv4 && ipv6 === port.ipv6 ? port : { ...port, ipv4, ipv6 };
  });
  if (refused.length === 0) return { record, refused };
  return { record: { ...record, ports }, refused: [...new Set(refused)] };
}

import { byCodeUnits } from "../../lib/code-unit-order.js";
import type { IpFamily } from "../../lib/ip.js";
import type { RouteMatch, RouteRecord } from "../../store/routes.js";
import type { ClusterHeartbeat, Snapshot, SourceStatus } from "../../store/store.js";
import type { ServiceTotals } from "../core/observability/request-metrics.js";
import { FAMILIES, familyStates, type StateCounts } from "../core/selection/backend-states.js";
import type { PassiveEjection } from "../core/selection/ejection.js";
import type { SelectFor } from "../core/selection/selector.js";
import type { TrafficView } from "../core/selection/traffic-history.js";
import type { SnapshotRoutes } from "../core/snapshot/served-routes.js";
import type { GrantRefusal } from "../core/trust/granted-clusters.js";
import type { DashboardSteering } from "./admin-steering-view.js";
import { type DashboardPod, podsOf } from "./dashboard-pods.js";

/**
 * Exactly what the dashboard page (`/_edgeslice/ui`) shows, served behind the admin token at
 * `/_edgeslice/dashboard`. Its charts come from `history`, the router's own ring of recent samples
 * (core/selection/traffic-history.ts); `services` carries the cumulative counters.
 */
export interface DashboardView {
  readonly version: number | null;
  readonly ageSeconds: number | null;
  /** undefined for a source that cannot lose its store (the all-in-one's memory store). */
  readonly store: SourceStatus | undefined;
  readonly clusters: readonly DashboardCluster[];
  readonly routes: readonly DashboardRoute[];
  readonly services: readonly ServiceTotals[];
  /** The last minutes, per service and per cluster, and retries. */
  readonly history: TrafficView | null;
  /** What the router refused: CLUSTER_GRANTS (clusters, routes, endpoints) and clusters past their budget (records, changes). */
  readonly refused: readonly GrantRefusal[];
  /** Cross-cluster steering: decisions per Service and cluster, each cluster's state; null when not wired. */
  readonly steering: DashboardSteering | null;
  /** What the page cannot know yet, said in words. */
  readonly notes: readonly string[];
}

export interface DashboardCluster {
  readonly name: string;
  readonly stale: boolean;
  /** Stale longer than FAIL_STATIC_MAX_MS: it serves nothing. */
  readonly expired: boolean;
  readonly services: number;
  /**
   * Seconds since the sync's last heartbeat record (its clock against this router's: informational; staleness
   * comes from the lease), null when the source reads no heartbeat records (Workers) or has none yet.
   */
  readonly heartbeatAgeSeconds: number | null;
  /** What the sync's heartbeat says of its Kubernetes API server. */
  readonly apiserver: "reachable" | "unreachable" | "unknown";
  /** Seconds the sync has not reached its API server (it publishes its last known state meanwhile). */
  readonly apiserverUnreachableSeconds: number | null;
}

/** One route as served, with the backends of every Service port its rules name, per publishing cluster. */
export interface DashboardRoute {
  readonly route: string;
  /** The route's host names; empty: every host. */
  readonly hosts: readonly string[];
  /** Each match of its rules in short: `/api` (prefix), `= /exact`, with a method and `[name: value]` headers. */
  readonly paths: readonly string[];
  /** Each rule: its matches (empty: every request) and where it sends, by weight. */
  readonly rules: readonly {
    readonly matches: readonly string[];
    readonly backends: readonly {
      readonly service: string;
      readonly port: number;
      readonly weight: number;
    }[];
  }[];
  /** Every cluster is stale and the last known backends serve. */
  readonly failStatic: boolean;
  readonly clusters: readonly {
    readonly cluster: string;
    readonly service: string;
    readonly port: number;
    readonly stale: boolean;
    /** The family the router sends this cluster's traffic to; null when it sends none (stale, no endpoints). */
    readonly uses: IpFamily | null;
    readonly families: Readonly<Record<IpFamily, StateCounts>>;
    /** Its pods, ejected and draining first; `morePods` were left out. */
    readonly pods: readonly DashboardPod[];
    readonly morePods: number;
  }[];
}

export interface DashboardInputs {
  readonly snapshot: Snapshot | undefined;
  readonly store: SourceStatus | undefined;
  readonly ageSeconds: number | null;
  /** The snapshot's routes as the router serves them; undefined without a snapshot. */
  readonly routes: SnapshotRoutes | undefined;
  readonly select: SelectFor;
  readonly ejection: Pick<PassiveEjection, "isEjected">;
  readonly services: readonly ServiceTotals[];
  readonly history?: TrafficView | undefined;
  /** The source's heartbeat records; undefined for a source that reads none. */
  readonly heartbeats: ReadonlyMap<string, ClusterHeartbeat> | undefined;
  /** Clusters stale past FAIL_STATIC_MAX_MS (core/trust/fail-static-bound.ts). */
  readonly expired?: ReadonlyMap<string, unknown> | undefined;
  readonly steering?: DashboardSteering | undefined;
  /** ms since epoch. */
  readonly now: number;
}

export const NO_HEARTBEATS_NOTE =
  "this router's store reader does not read heartbeat records: heartbeat age and API server state are unknown";

export function dashboardView(inputs: DashboardInputs): DashboardView {
  const { snapshot } = inputs;
  const isEjected = (address: string) => inputs.ejection.isEjected(address);
  const routes: DashboardRoute[] = [];
  if (snapshot && inputs.routes) {
    // As served: without the endpoints CLUSTER_GRANTS left out.
    const views = new Map(inputs.routes.clusters.map((view) => [view.name, view]));
    for (const served of inputs.routes.routes) {
      const clusters: DashboardRoute["clusters"][number][] = [];
      for (const { service, port, rule, backend } of routeBackendPorts(served.route)) {
        const selection = inputs.select(served, rule, backend);
        for (const publisher of served.publishers) {
          const record = views.get(publisher.cluster)?.servicesV2.get(service);
          const backends = record?.ports.find((candidate) => candidate.number === port);
          if (!backends) continue;
          const { pods, more } = podsOf(backends, isEjected);
          clusters.push({
            cluster: publisher.cluster,
            service,
            port,
            stale: publisher.stale,
            uses: selection.clusters.find((choice) => choice.cluster === publisher.cluster)?.family ?? null,
            families: Object.fromEntries(
              FAMILIES.map((family) => [family, familyStates(backends, family, isEjected)]),
            ) as Record<IpFamily, StateCounts>,
            pods,
            morePods: more,
          });
        }
      }
      routes.push({
        route: served.route.id,
        hosts: served.route.hostnames,
        paths: [...new Set(served.route.rules.flatMap((rule) => rule.matches.map(matchSummary)))],
        rules: served.route.rules.map((rule) => ({
          matches: rule.matches.map(matchSummary),
          backends: rule.backends.map((ref) =>
            "service" in ref
              ? { service: ref.service, port: ref.port, weight: ref.weight }
              : { service: `invalid: ${ref.invalid}`, port: 0, weight: ref.weight },
          ),
        })),
        failStatic: served.failStatic,
        clusters,
      });
    }
    routes.sort((a, b) => byCodeUnits(a.hosts[0] ?? "", b.hosts[0] ?? "") || byCodeUnits(a.route, b.route));
  }
  return {
    version: snapshot?.version ?? null,
    ageSeconds: inputs.ageSeconds,
    store: inputs.store,
    clusters: (snapshot?.clusters ?? []).map((cluster) =>
      clusterHealth(cluster.name, cluster.stale, cluster.servicesV2.size, inputs),
    ),
    routes,
    services: [...inputs.services].sort(
      (a, b) => byCodeUnits(a.service, b.service) || byCodeUnits(a.cluster, b.cluster),
    ),
    history: inputs.history ?? null,
    refused: inputs.routes?.refusals ?? [],
    steering: inputs.steering ?? null,
    notes: inputs.heartbeats === undefined ? [NO_HEARTBEATS_NOTE] : [],
  };
}

function clusterHealth(
  name: string,
  stale: boolean,
  services: number,
  inputs: Pick<DashboardInputs, "heartbeats" | "now" | "expired">,
): DashboardCluster {
  const beat = inputs.heartbeats?.get(name);
  const seconds = (since: number) => Math.max(0, (inputs.now - since) / 1000);
  const unreachableSince = beat?.apiserverUnreachableSince;
  return {
    name,
    stale,
    expired: inputs.expired?.has(name) === true,
    services,
    heartbeatAgeSeconds: beat ? seconds(beat.at) : null,
    // A stale cluster's last heartbeat is old news: what it said of its API server then says nothing now.
    apiserver: !beat || stale ? "unknown" : unreachableSince === undefined ? "reachable" : "unreachable",
    apiserverUnreachableSeconds: unreachableSince === undefined ? null : seconds(unreachableSince),
  };
}

/** A match in short: `/api`, `= /exact`, `POST /api`, `/api [x-env: canary]`. */
function matchSummary(match: RouteMatch): string {
  const path = match.path.type === "Exact" ? `= ${match.path.value}` : match.path.value;
  const headers = match.headers.map((header) => `${header.name}: ${header.value}`).join(", ");
  return `${match.method ? `${match.method} ` : ""}${path}${headers ? ` [${headers}]` : ""}`;
}

/** Each Service port a route's rules send to, once, with the first rule and backendRef that names it. */
function routeBackendPorts(
  route: RouteRecord,
): { service: string; port: number; rule: number; backend: number }[] {
  const seen = new Set<string>();
  const ports: { service: string; port: number; rule: number; backend: number }[] = [];
  route.rules.forEach((rule, ruleIndex) => {
    rule.backends.forEach((ref, backendIndex) => {
      if (!("service" in ref)) return;
      const key = `${ref.service}:${ref.port}`;
      if (seen.has(key)) return;
      seen.add(key);
      ports.push({ service: ref.service, port: ref.port, rule: ruleIndex, backend: backendIndex });
    });
  });
  return ports;
}

import type { IpFamily } from "../../lib/ip.js";
import type { Snapshot, SourceStatus } from "../../store/store.js";
import { FAMILIES, familyStates, type StateCounts } from "../core/backend-states.js";
import type { PassiveEjection } from "../core/ejection.js";
import type { ServiceTotals } from "../core/request-metrics.js";
import { type RouteEntry, routeIndexOf } from "../core/route-index.js";
import type { Selection } from "../core/select.js";

/**
 * Exactly what the dashboard page (`/_edgeslice/ui`) shows, served behind the admin token at
 * `/_edgeslice/dashboard`. Request rate and error ratio are not computed here: `services` carries the
 * cumulative counters and the page divides the difference between two refreshes by the time between them,
 * so the router keeps no state per viewer.
 */
export interface DashboardView {
  readonly version: number | null;
  readonly ageSeconds: number | null;
  /** undefined for a source that cannot lose its store (the all-in-one's memory store). */
  readonly store: SourceStatus | undefined;
  readonly clusters: readonly DashboardCluster[];
  readonly routes: readonly DashboardRoute[];
  readonly services: readonly ServiceTotals[];
  /** What the page cannot know yet, said in words. */
  readonly notes: readonly string[];
}

export interface DashboardCluster {
  readonly name: string;
  readonly stale: boolean;
  readonly services: number;
  /**
   * The store's snapshot does not carry the heartbeat's time or the sync's view of its apiserver: null and
   * "unknown" until it does.
   */
  readonly heartbeatAgeSeconds: number | null;
  readonly apiserver: "unknown";
}

export interface DashboardRoute {
  readonly host: string;
  readonly pathPrefix: string;
  /** Every cluster is stale and the last known backends serve. */
  readonly failStatic: boolean;
  readonly clusters: readonly {
    readonly cluster: string;
    readonly service: string;
    readonly stale: boolean;
    /** The family the router sends this cluster's traffic to; null when it sends none (stale, no endpoints). */
    readonly uses: IpFamily | null;
    readonly families: Readonly<Record<IpFamily, StateCounts>>;
  }[];
}

export interface DashboardInputs {
  readonly snapshot: Snapshot | undefined;
  readonly store: SourceStatus | undefined;
  readonly ageSeconds: number | null;
  readonly select: (route: RouteEntry) => Selection;
  readonly ejection: Pick<PassiveEjection, "isEjected">;
  readonly services: readonly ServiceTotals[];
}

export const DASHBOARD_NOTES = [
  "heartbeat age and apiserver state are not in the store yet: shown as unknown",
] as const;

export function dashboardView(inputs: DashboardInputs): DashboardView {
  const { snapshot } = inputs;
  const isEjected = (address: string) => inputs.ejection.isEjected(address);
  const routes: DashboardRoute[] = [];
  if (snapshot) {
    for (const entries of routeIndexOf(snapshot).byHost.values()) {
      for (const route of entries) {
        const selection = inputs.select(route);
        routes.push({
          host: route.host,
          pathPrefix: route.pathPrefix,
          failStatic: route.failStatic,
          clusters: route.candidates.map((candidate) => ({
            cluster: candidate.cluster,
            service: candidate.record.service,
            stale: candidate.stale,
            uses: selection.clusters.find((choice) => choice.cluster === candidate.cluster)?.family ?? null,
            families: Object.fromEntries(
              FAMILIES.map((family) => [family, familyStates(candidate.record, family, isEjected)]),
            ) as Record<IpFamily, StateCounts>,
          })),
        });
      }
    }
    routes.sort((a, b) => compare(a.host, b.host) || compare(a.pathPrefix, b.pathPrefix));
  }
  return {
    version: snapshot?.version ?? null,
    ageSeconds: inputs.ageSeconds,
    store: inputs.store,
    clusters: (snapshot?.clusters ?? []).map((cluster) => ({
      name: cluster.name,
      stale: cluster.stale,
      services: cluster.services.size,
      heartbeatAgeSeconds: null,
      apiserver: "unknown",
    })),
    routes,
    services: [...inputs.services].sort(
      (a, b) => compare(a.service, b.service) || compare(a.cluster, b.cluster),
    ),
    notes: DASHBOARD_NOTES,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

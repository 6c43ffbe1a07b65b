import type { Logger } from "../../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../../lib/warn-once.js";
import type { Snapshot } from "../../../store/store.js";
import type { RouterMetrics } from "../observability/metrics.js";
import type { RouteConflict } from "../routes/clusters.js";
import type { ClusterGrants } from "../trust/cluster-grants.js";
import type { GrantRefusal } from "../trust/granted-clusters.js";
import type { ConflictChanges, SnapshotRoutes } from "./served-routes.js";
import { snapshotRoutesOf } from "./snapshot-routes.js";

const REFUSAL_MESSAGES: Record<GrantRefusal["kind"], string> = {
  cluster: "ignoring a cluster CLUSTER_GRANTS does not list: none of its routes and services is served",
  route: "refusing a route for hosts its cluster was not granted (CLUSTER_GRANTS)",
  endpoints: "leaving out endpoints outside their cluster's networks (CLUSTER_GRANTS)",
  records:
    "refusing records of a cluster past its budget (RECORD_MAX_BYTES, CLUSTER_MAX_BYTES, CLUSTER_MAX_RECORDS); its other records and every other cluster keep serving",
  changes:
    "a cluster's change stream runs faster than CLUSTER_MAX_CHANGES_PER_SECOND: its changes are applied at that rate, coalesced",
};

/** Refusals of a cluster's budget: logged once while they last, whatever their count does meanwhile. */
const BUDGET_KINDS: ReadonlySet<GrantRefusal["kind"]> = new Set(["records", "changes"]);

/**
 * snapshotRoutesOf, reporting what each new snapshot's routes hold that an operator must hear of, once while
 * it lasts (lib/warn-once.ts): a route id published with different definitions (one of them serves,
 * routes/clusters.ts), and each refusal of CLUSTER_GRANTS or of a cluster's budget, counted as it is logged.
 */
export class RouteReports {
  readonly #warnings: WarnOnce;
  readonly #metrics: RouterMetrics;
  readonly #grants: ClusterGrants | undefined;
  readonly #gateways: ReadonlySet<string> | undefined;
  /** The routes reported last: a snapshot's routes updated from them report only the conflicts that changed. */
  #last: SnapshotRoutes | undefined;
  /** The warn-once keys of what the routes reported last hold (`route conflict <id>`, `grant <kind> ...`). */
  #reported = new Set<string>();

  constructor(
    logger: Logger,
    metrics: RouterMetrics,
    grants: ClusterGrants | undefined,
    gateways?: ReadonlySet<string>,
  ) {
    this.#warnings = createWarnOnce(logger);
    this.#metrics = metrics;
    this.#grants = grants;
    this.#gateways = gateways;
  }

  routesOf(snapshot: Snapshot): SnapshotRoutes {
    const routes = snapshotRoutesOf(snapshot, this.#grants, this.#gateways);
    if (routes === this.#last) return routes;
    const changes = routes.conflictChanges;
    // Updated from the routes reported last (snapshot-routes-update.ts): only the conflicts that changed.
    if (changes && this.#last?.version === changes.since && routes.refusals.length === 0) {
      this.#reportChanges(changes);
    } else this.#reportAll(routes);
    this.#last = routes;
    return routes;
  }

  #reportChanges(changes: ConflictChanges): void {
    const kept = new Set(changes.added.map((conflict) => this.#warnConflict(conflict)));
    for (const key of kept) this.#reported.add(key);
    for (const conflict of changes.removed) {
      const key = conflictKey(conflict);
      if (kept.has(key)) continue;
      this.#warnings.clear(key);
      this.#reported.delete(key);
    }
  }

  #reportAll(routes: SnapshotRoutes): void {
    const now = new Set<string>();
    for (const conflict of routes.conflicts) now.add(this.#warnConflict(conflict));
    for (const refusal of routes.refusals) now.add(this.#reportRefusal(refusal));
    for (const key of this.#reported) if (!now.has(key)) this.#warnings.clear(key);
    this.#reported = now;
  }

  #warnConflict(conflict: RouteConflict): string {
    const key = conflictKey(conflict);
    this.#warnings.warn(
      key,
      `${conflict.served.join(",")} / ${conflict.shadowed.join(",")}`,
      "clusters publish one route with different definitions; serving the one most of them publish",
      { route: conflict.id, served: conflict.served, shadowed: conflict.shadowed },
    );
    return key;
  }

  /** Logs a refusal once while it lasts, counting it as it is logged; its warn-once key. */
  #reportRefusal(refusal: GrantRefusal): string {
    const key = `grant ${refusal.kind} ${refusal.cluster} ${refusal.id}`;
    const budget = BUDGET_KINDS.has(refusal.kind);
    const reason = budget ? "over budget" : `${refusal.count} ${refusal.refused.join(",")}`;
    const logged = this.#warnings.warn(key, reason, REFUSAL_MESSAGES[refusal.kind], refusalFields(refusal));
    if (logged && budget) this.#metrics.budgetRefused(refusal.cluster, refusal.kind);
    else if (logged) this.#metrics.grantRefused(refusal.cluster, refusal.kind);
    return key;
  }
}

const conflictKey = (conflict: RouteConflict) => `route conflict ${conflict.id}`;

function refusalFields(refusal: GrantRefusal): Record<string, unknown> {
  switch (refusal.kind) {
    case "cluster":
      return { cluster: refusal.cluster, records: refusal.count };
    case "route":
      return { cluster: refusal.cluster, route: refusal.id, hosts: refusal.refused };
    case "endpoints":
      return {
        cluster: refusal.cluster,
        service: refusal.id,
        addresses: refusal.refused,
        count: refusal.count,
      };
    case "records":
      return { cluster: refusal.cluster, records: refusal.count, examples: refusal.refused };
    case "changes":
      return { cluster: refusal.cluster };
  }
}

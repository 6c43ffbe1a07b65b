import type { Logger } from "../../lib/logger.js";
import { KINDS, type KindSpec, type RouteKind } from "./kinds.js";
import type { ReflectorObserver, ReflectorTarget } from "./reflector-types.js";

export interface OptionalKindsOptions {
  readonly logger: Logger;
  /** How often a kind read as empty is listed again. */
  readonly retryMs: number;
  /** The sync watches chosen namespaces (WATCH_NAMESPACES), so its RBAC may be Roles only. */
  readonly namespaced: boolean;
  readonly observer?: ReflectorObserver | undefined;
}

type Optional = NonNullable<ReflectorTarget["optional"]>;

/** What the last answer to a reflector's list said: not yet answered, listed, 404, or refused by design. */
type KindState = "unknown" | "served" | "missing" | "refused";

/** The reflectors of one API group (group/version), and what was said about it. */
interface GroupState {
  readonly kinds: Map<string, { readonly resource: string; state: KindState }>;
  /** "the API server does not serve this API group" was said and nothing of the group was served since. */
  reportedWhole: boolean;
  /** Labels said to be missing on their own, or named as not served when the group came back. */
  readonly reportedLabels: Set<string>;
}

const REFUSED_CLUSTER_SCOPED =
  "WATCH_NAMESPACES: this cluster-scoped kind is not readable with Roles only; reading none, retrying " +
  "(routes that need it are not published: grant get, list, watch on it cluster-wide)";

function refusedLineOf(kind: RouteKind): string | undefined {
  const spec: KindSpec = KINDS[kind];
  return spec.whenRefused;
}

/**
 * The `optional` part of route kinds' reflectors: what the sync says when a kind is not served or, watching
 * chosen namespaces, a cluster-scoped kind its Roles cannot grant (one line per kind).
 *
 * A kind is not served when its CRD is not installed. A cluster without the Gateway API gets one line for the
 * whole group; a cluster with only some of its CRDs (the standard channel before GRPCRoute, or a CRD left
 * out on purpose) gets one line per missing kind, never the group line, since its other kinds are read. To
 * tell the two apart the group's first answers are awaited: a 404 is reported once every reflector of the
 * group has had an answer. A kind of a group reported missing that is listed again says "serves this API
 * group now" once, naming the kinds still not served.
 *
 * @example
 * const optional = new OptionalKinds({ logger, retryMs: 30_000, namespaced: false });
 * new ListWatchReflector({ ...target, optional: optional.forKind("HTTPRoute", label) }, tuning);
 */
export class OptionalKinds {
  private readonly groups = new Map<string, GroupState>();
  private readonly refusedLabels = new Set<string>();

  constructor(private readonly options: OptionalKindsOptions) {}

  /** The hooks of one reflector of `kind`, named `label` in logs. */
  forKind(kind: RouteKind, label: string): Optional {
    const { group, version, resource, namespaced } = KINDS[kind];
    const groupVersion = group === "" ? version : `${group}/${version}`;
    const state = this.groupState(groupVersion);
    state.kinds.set(label, { resource, state: "unknown" });
    return {
      retryMs: this.options.retryMs,
      // Roles grant nothing cluster-scoped: a sync given WATCH_NAMESPACES may have no rule for these. A kind
      // with a `whenRefused` line is one the sync's RBAC may lack (kinds.ts).
      unreadableWhenRefused: (this.options.namespaced && !namespaced) || refusedLineOf(kind) !== undefined,
      onMissing: (why) => this.missing(kind, groupVersion, label, why),
      onServed: () => this.served(groupVersion, label),
    };
  }

  private groupState(groupVersion: string): GroupState {
    let state = this.groups.get(groupVersion);
    if (!state) {
      state = { kinds: new Map(), reportedWhole: false, reportedLabels: new Set() };
      this.groups.set(groupVersion, state);
    }
    return state;
  }

  private missing(kind: RouteKind, groupVersion: string, label: string, why: "not served" | "refused"): void {
    const { logger, observer, retryMs } = this.options;
    observer?.missing?.(KINDS[kind].resource);
    const group = this.groupState(groupVersion);
    const entry = group.kinds.get(label);
    if (entry) entry.state = why === "refused" ? "refused" : "missing";
    if (why === "refused") {
      this.refusedLabels.add(label);
      logger.warn(refusedLineOf(kind) ?? REFUSED_CLUSTER_SCOPED, { informer: label, retryInMs: retryMs });
    }
    this.report(groupVersion, group);
  }

  private served(groupVersion: string, label: string): void {
    const { logger } = this.options;
    if (this.refusedLabels.delete(label))
      logger.info("this cluster-scoped kind is readable now", { informer: label });
    const group = this.groupState(groupVersion);
    const entry = group.kinds.get(label);
    const was = entry?.state;
    if (entry) entry.state = "served";
    if (group.reportedWhole) {
      group.reportedWhole = false;
      const notServed = this.labelsIn(group, "missing");
      for (const other of notServed) group.reportedLabels.add(other);
      logger.info("the API server serves this API group now", { group: groupVersion, notServed });
    } else if (was === "missing" && group.reportedLabels.delete(label)) {
      logger.info("the API server serves this kind now", { group: groupVersion, informer: label });
    }
    this.report(groupVersion, group);
  }

  /** Says what is missing once every reflector of the group has had an answer. */
  private report(groupVersion: string, group: GroupState): void {
    const { logger, retryMs } = this.options;
    if (group.reportedWhole || this.labelsIn(group, "unknown").length > 0) return;
    const missing = this.labelsIn(group, "missing");
    if (missing.length === 0) return;
    if (this.labelsIn(group, "served").length === 0) {
      group.reportedWhole = true;
      // Most clusters have no Gateway API: a fact about the cluster, not a fault.
      logger.info(
        "the API server does not serve this API group (CRDs not installed?): reading none; retrying",
        {
          group: groupVersion,
          retryInMs: retryMs,
        },
      );
      return;
    }
    for (const label of missing) {
      if (group.reportedLabels.has(label)) continue;
      group.reportedLabels.add(label);
      logger.info(
        "the API server serves this API group but not this kind (its CRD not installed?): reading none; retrying",
        { group: groupVersion, informer: label, retryInMs: retryMs },
      );
    }
  }

  private labelsIn(group: GroupState, state: KindState): string[] {
    return [...group.kinds].filter(([, entry]) => entry.state === state).map(([label]) => label);
  }
}

import type { Logger } from "../../lib/logger.js";
import { KINDS, type RouteKind } from "./kinds.js";
import type { ReflectorObserver, ReflectorTarget } from "./reflector-types.js";

export interface OptionalKindsOptions {
  readonly logger: Logger;
  /** How often a kind read as empty is listed again. */
  readonly retryMs: number;
  /** The sync watches chosen namespaces (WATCH_NAMESPACES), so its RBAC may be Roles only. */
  readonly namespaced: boolean;
  readonly observer?: ReflectorObserver | undefined;
}

/**
 * The `optional` part of a route kind's reflector: what the sync says when a kind is not served (the Gateway
 * API's CRDs not installed: one line per API group while any of its kinds is missing) or, watching chosen
 * namespaces, a cluster-scoped kind its Roles cannot grant (one line per kind).
 */
export function createOptionalKinds(
  options: OptionalKindsOptions,
): (kind: RouteKind, label: string) => NonNullable<ReflectorTarget["optional"]> {
  const { logger, retryMs, observer } = options;
  const missingGroups = new Map<string, Set<string>>();
  const refusedLabels = new Set<string>();
  return (kind, label) => {
    const { group, version, resource, namespaced } = KINDS[kind];
    const groupVersion = group === "" ? version : `${group}/${version}`;
    return {
      retryMs,
      // Roles grant nothing cluster-scoped: a sync given WATCH_NAMESPACES may have no rule for these. Secrets
      // are read only for HTTPS listeners: a sync whose RBAC predates them keeps serving everything else.
      // GRPCRoutes likewise: a sync whose RBAC predates them (no grpcroutes rule) serves everything else.
      unreadableWhenRefused: (options.namespaced && !namespaced) || kind === "Secret" || kind === "GRPCRoute",
      onMissing: (why) => {
        observer?.missing?.(resource);
        if (why === "refused" && kind === "Secret") {
          refusedLabels.add(label);
          logger.warn(
            "Secrets are not readable: HTTPS listeners' certificateRefs resolve to nothing; retrying " +
              "(grant get, list, watch on secrets, as deploy/ does)",
            { informer: label, retryInMs: retryMs },
          );
          return;
        }
        if (why === "refused" && kind === "GRPCRoute") {
          refusedLabels.add(label);
          logger.warn(
            "GRPCRoutes are not readable: none is published; retrying (grant get, list, watch on grpcroutes and " +
              "update on grpcroutes/status, as deploy/ does)",
            { informer: label, retryInMs: retryMs },
          );
          return;
        }
        if (why === "refused") {
          refusedLabels.add(label);
          logger.warn(
            "WATCH_NAMESPACES: this cluster-scoped kind is not readable with Roles only; reading none, retrying " +
              "(routes that need it are not published: grant get, list, watch on it cluster-wide)",
            { informer: label, retryInMs: retryMs },
          );
          return;
        }
        const labels = missingGroups.get(groupVersion) ?? new Set<string>();
        // Most clusters have no Gateway API: a fact about the cluster, not a fault.
        if (labels.size === 0) {
          logger.info(
            "the API server does not serve this API group (CRDs not installed?): reading none; retrying",
            {
              group: groupVersion,
              retryInMs: retryMs,
            },
          );
        }
        labels.add(label);
        missingGroups.set(groupVersion, labels);
      },
      onServed: () => {
        if (refusedLabels.delete(label))
          logger.info("this cluster-scoped kind is readable now", { informer: label });
        const labels = missingGroups.get(groupVersion);
        labels?.delete(label);
        if (labels?.size === 0) {
          missingGroups.delete(groupVersion);
          logger.info("the API server serves this API group now", { group: groupVersion });
        }
      },
    };
  };
}

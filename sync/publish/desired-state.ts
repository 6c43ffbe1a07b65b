import type { Logger } from "../../lib/logger.js";
import type { RouteRecord } from "../../store/routes.js";
import { serializeRoute } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import {
  type AnnotationRouteResult,
  annotationRouteOf,
  type DesiredRoutes,
  desiredRoutes,
  type RouteSettings,
  referencedPorts,
} from "../translate/desired-routes.js";
import type { KubeService } from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";

/** A route to publish with its stored form. */
export interface DesiredRoute {
  readonly route: RouteRecord;
  readonly raw: string;
}

/** What one cluster should publish now, minus the backends (service records follow from `ports`). */
export interface DesiredState {
  readonly routes: ReadonlyMap<string, DesiredRoute>;
  readonly ports: ReadonlyMap<string, ReadonlySet<number>>;
  readonly statuses: DesiredRoutes["statuses"];
  readonly conflicts: DesiredRoutes["conflicts"];
  readonly refusedClaims: DesiredRoutes["refusedClaims"];
  /** The certificates HTTPS listeners serve (their keys in the clear: sealed only as they are written). */
  readonly certificates: DesiredRoutes["certificates"];
  /** The client certificate validations HTTPS listeners ask for, per Gateway and port. */
  readonly clientValidations: DesiredRoutes["clientValidations"];
  /** BackendTLSPolicies in force: their records, and per Service the ports they apply to. */
  readonly backendTls: DesiredRoutes["backendTls"];
}

export interface DesiredStateOptions {
  readonly cache: ClusterCache;
  readonly settings: RouteSettings;
  readonly cluster: string;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
}

/**
 * Computes the desired routes from the cache (translate/desired-routes.ts, pure and whole) and says what is
 * wrong with them once while it stays so: malformed annotations, HOST_CLAIMS refusals, conflicts between
 * routes, Gateway API and Ingress problems, each logged when it appears and when it goes away, and counted.
 * The annotation route of an unchanged Service object and the stored form of an unchanged route are reused.
 */
export function createDesiredState(options: DesiredStateOptions) {
  const { cache, settings, cluster, logger, metrics } = options;
  const annotationRoutes = new WeakMap<KubeService, AnnotationRouteResult>();
  const serialised = new WeakMap<RouteRecord, string>();
  const reported = new Map<string, Set<string>>();

  const annotationRoute = (service: KubeService) => {
    let result = annotationRoutes.get(service);
    if (result === undefined) {
      result = annotationRouteOf(service);
      annotationRoutes.set(service, result);
    }
    return result;
  };

  /** Logs each of `current` that is new since the last compute, and each one that went away. */
  const report = (
    topic: string,
    current: ReadonlyMap<string, Record<string, unknown>>,
    message: string,
    resolved: string,
  ) => {
    const before = reported.get(topic) ?? new Set<string>();
    for (const [key, fields] of current) if (!before.has(key)) logger.warn(message, { cluster, ...fields });
    for (const key of before) if (!current.has(key)) logger.info(resolved, { cluster, key });
    reported.set(topic, new Set(current.keys()));
    return current.size - [...current.keys()].filter((key) => before.has(key)).length;
  };

  return {
    /** `kept`: the stored route of an id, for Services whose annotations turned invalid. */
    compute(kept: (id: string) => RouteRecord | undefined): DesiredState {
      const desired = desiredRoutes({
        services: cache.services(),
        objects: cache.routeObjects?.(),
        settings,
        annotationRoute,
        kept,
      });
      const routes = new Map<string, DesiredRoute>();
      const unpublishable = new Map<string, Record<string, unknown>>();
      for (const [id, route] of desired.routes) {
        let raw = serialised.get(route);
        if (raw === undefined) {
          try {
            raw = serializeRoute(route);
          } catch (error) {
            unpublishable.set(id, { route: id, error });
            continue;
          }
          serialised.set(route, raw);
        }
        routes.set(id, { route, raw });
      }
      const invalid = report(
        "annotations",
        new Map(desired.invalidAnnotations.map((item) => [`${item.service} ${item.reason}`, { ...item }])),
        "service annotations invalid; keeping what is published",
        "service annotations valid again",
      );
      if (invalid > 0) metrics.count("invalidServices", invalid);
      report(
        "unpublishable",
        unpublishable,
        "route record left out: it does not validate",
        "route publishable again",
      );
      report(
        "claims",
        new Map(desired.refusedClaims.map((item) => [`${item.route} ${item.host}`, { ...item }])),
        "host claim refused by HOST_CLAIMS: the route does not serve this host",
        "host claim no longer refused",
      );
      report(
        "conflicts",
        new Map(desired.conflicts.map((item) => [`${item.host} ${item.match} ${item.loser}`, { ...item }])),
        "two routes claim the same host and match: the older one (then the lower id) is served",
        "route conflict resolved",
      );
      report(
        "problems",
        new Map(desired.problems.map((item) => [`${item.object} ${item.reason}`, { ...item }])),
        "route object not fully applied",
        "route object problem gone",
      );
      metrics.set("routes", routes.size);
      metrics.set("routeConflicts", desired.conflicts.length);
      metrics.set("hostClaimsRefused", desired.refusedClaims.length);
      return {
        routes,
        ports: referencedPorts([...routes.values()].map((item) => item.route)),
        statuses: desired.statuses,
        conflicts: desired.conflicts,
        refusedClaims: desired.refusedClaims,
        certificates: desired.certificates,
        clientValidations: desired.clientValidations,
        backendTls: desired.backendTls,
      };
    },
  };
}

export type DesiredStateSource = ReturnType<typeof createDesiredState>;

import type { Logger } from "../../lib/logger.js";
import type { RouteRecord } from "../../store/routes.js";
import { serializeRoute } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import { type AnnotationRouteResult, annotationRouteOf } from "../translate/annotation-route.js";
import {
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
export class DesiredStateSource {
  readonly #options: DesiredStateOptions;
  /** The annotation route of each Service object seen (an object the cache replaced is forgotten). */
  readonly #annotationRoutes = new WeakMap<KubeService, AnnotationRouteResult>();
  /** The stored form of each route record computed. */
  readonly #serialised = new WeakMap<RouteRecord, string>();
  /** Per topic (annotations, claims, …), the keys of the problems logged at the last compute. */
  readonly #reported = new Map<string, Set<string>>();

  constructor(options: DesiredStateOptions) {
    this.#options = options;
  }

  /** `kept`: the stored route of an id, for Services whose annotations turned invalid. */
  compute(kept: (id: string) => RouteRecord | undefined): DesiredState {
    const { metrics } = this.#options;
    const desired = desiredRoutes({
      services: this.#options.cache.services(),
      objects: this.#options.cache.routeObjects?.(),
      settings: this.#options.settings,
      annotationRoute: (service) => this.#annotationRoute(service),
      kept,
    });
    const { routes, unpublishable } = this.#serialise(desired.routes);
    this.#reportProblems(desired, unpublishable);
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
  }

  #annotationRoute(service: KubeService): AnnotationRouteResult {
    let result = this.#annotationRoutes.get(service);
    if (result === undefined) {
      result = annotationRouteOf(service);
      this.#annotationRoutes.set(service, result);
    }
    return result;
  }

  /** Each route with its stored form; those that do not serialise (do not validate) left out, with why. */
  #serialise(desired: DesiredRoutes["routes"]) {
    const routes = new Map<string, DesiredRoute>();
    const unpublishable = new Map<string, Record<string, unknown>>();
    for (const [id, route] of desired) {
      let raw = this.#serialised.get(route);
      if (raw === undefined) {
        try {
          raw = serializeRoute(route);
        } catch (error) {
          unpublishable.set(id, { route: id, error });
          continue;
        }
        this.#serialised.set(route, raw);
      }
      routes.set(id, { route, raw });
    }
    return { routes, unpublishable };
  }

  #reportProblems(desired: DesiredRoutes, unpublishable: ReadonlyMap<string, Record<string, unknown>>): void {
    const invalid = this.#report(
      "annotations",
      new Map(desired.invalidAnnotations.map((item) => [`${item.service} ${item.reason}`, { ...item }])),
      "service annotations invalid; keeping what is published",
      "service annotations valid again",
    );
    if (invalid > 0) this.#options.metrics.count("invalidServices", invalid);
    this.#report(
      "unpublishable",
      unpublishable,
      "route record left out: it does not validate",
      "route publishable again",
    );
    this.#report(
      "claims",
      new Map(desired.refusedClaims.map((item) => [`${item.route} ${item.host}`, { ...item }])),
      "host claim refused by HOST_CLAIMS: the route does not serve this host",
      "host claim no longer refused",
    );
    this.#report(
      "conflicts",
      new Map(desired.conflicts.map((item) => [`${item.host} ${item.match} ${item.loser}`, { ...item }])),
      "two routes claim the same host and match: the older one (then the lower id) is served",
      "route conflict resolved",
    );
    this.#report(
      "problems",
      new Map(desired.problems.map((item) => [`${item.object} ${item.reason}`, { ...item }])),
      "route object not fully applied",
      "route object problem gone",
    );
  }

  /** Logs each of `current` that is new since the last compute, and each one that went away; how many are new. */
  #report(
    topic: string,
    current: ReadonlyMap<string, Record<string, unknown>>,
    message: string,
    resolved: string,
  ): number {
    const { cluster, logger } = this.#options;
    const before = this.#reported.get(topic) ?? new Set<string>();
    for (const [key, fields] of current) if (!before.has(key)) logger.warn(message, { cluster, ...fields });
    for (const key of before) if (!current.has(key)) logger.info(resolved, { cluster, key });
    this.#reported.set(topic, new Set(current.keys()));
    return current.size - [...current.keys()].filter((key) => before.has(key)).length;
  }
}

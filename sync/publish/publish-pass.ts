import type { Logger } from "../../lib/logger.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import { DEFAULT_ROUTE_SETTINGS, type RouteSettings } from "../translate/desired-routes.js";
import { namespaceOf } from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";
import { createBackendTlsWrites } from "./backend-tls-writes.js";
import { createCertificateWrites } from "./certificate-writes.js";
import { createClientValidationWrites } from "./client-validation-writes.js";
import { type DesiredState, DesiredStateSource } from "./desired-state.js";
import { StoreWriteError, writeRoutes } from "./route-writes.js";
import type { SafetyValve } from "./safety-valve.js";
import { ServicePublisher } from "./service-publisher.js";
import { StoredState } from "./stored-state.js";
import type { Timers } from "./timers.js";

export interface PublishPassOptions {
  readonly cache: ClusterCache;
  readonly writer: ClusterWriter;
  readonly cluster: string;
  readonly routeSettings?: RouteSettings | undefined;
  readonly valve: SafetyValve;
  readonly onDesired?: ((desired: DesiredState) => void) | undefined;
  /** The safety valve's hold on a Service is over. */
  readonly onHoldOver: (namespace: string, name: string) => void;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  readonly now: () => number;
  readonly timers: Timers;
  /** TLS_STORE_KEY: seals the certificates HTTPS listeners use; none are published without it. */
  readonly tlsStoreKey?: Uint8Array | undefined;
}

/** How a pass ended: everything written, publishing stopped part-way, or a store call failed. */
export type PassResult =
  | { readonly kind: "done" | "stopped" }
  | { readonly kind: "failed"; readonly what: string; readonly error: unknown };

/**
 * What the reconciler has to publish and one pass over it. A pass recomputes the routes when a
 * route-relevant object changed (whole: desired-state.ts), then writes in an order that never shows a router
 * a route without the service port it needs: routes whose backends are all stored already, then the dirty
 * Services (each with the ports both the desired and the stored routes reference), then the other routes,
 * then route removals, then the Services whose referenced ports those writes changed.
 */
export function createPublishPass(options: PublishPassOptions) {
  const { cache, writer, cluster, logger, metrics, now } = options;
  /** What the store holds; undefined until loaded (then everything is compared again). */
  let stored: StoredState | undefined;
  const desiredState = new DesiredStateSource({
    cache,
    settings: options.routeSettings ?? DEFAULT_ROUTE_SETTINGS,
    cluster,
    logger,
    metrics,
  });
  let desired: DesiredState | undefined;
  const certificates = createCertificateWrites({
    writer: writer.certificates,
    cluster,
    storeKey: options.tlsStoreKey,
    logger,
  });
  const clientValidations = createClientValidationWrites({ writer: writer.certificates, cluster, logger });
  const backendTls = createBackendTlsWrites({ writer: writer.backendTls, cluster, logger });
  /** The routes must be recomputed; when the earliest event still pending for them arrived. */
  let routesDirty = false;
  let routesReceivedAt: number | undefined;
  /** Desired routes not written yet (set when they change or a route write failed). */
  let routesPending = false;
  /** Services to recompute, with when the earliest watch event still pending for each arrived. */
  const dirty = new Map<string, number | undefined>();

  const markService = (service: string, receivedAt: number | undefined) => {
    const earlier = dirty.get(service);
    dirty.set(service, earlier === undefined ? receivedAt : Math.min(earlier, receivedAt ?? earlier));
  };

  /** The ports a Service's record serves: those the desired routes and the stored routes reference. */
  const portsOf = (state: StoredState, service: string): Set<number> =>
    new Set([...(desired?.ports.get(service) ?? []), ...state.referencedPorts(service)]);

  /** The BackendTLSPolicy in force per port of a Service: its record says `https` there. */
  const tlsPortsOf = (service: string) => desired?.backendTls.ports.get(service);

  const recomputeRoutes = (state: StoredState) => {
    const before = desired;
    desired = desiredState.compute((id) => state.route(id));
    routesDirty = false;
    routesPending = true;
    const services = [...(before?.ports.keys() ?? []), ...desired.ports.keys()];
    services.push(...(before?.backendTls.ports.keys() ?? []), ...desired.backendTls.ports.keys());
    for (const service of new Set(services)) {
      const tlsChanged = !samePolicies(before?.backendTls.ports.get(service), tlsPortsOf(service));
      if (tlsChanged || !samePorts(before?.ports.get(service), desired.ports.get(service)))
        markService(service, routesReceivedAt);
    }
    try {
      options.onDesired?.(desired);
    } catch (error) {
      logger.error("onDesired threw", { error });
    }
  };

  const routeContext = (state: StoredState, receivedAt: number | undefined) => ({
    writer,
    written: (op: "put" | "delete") => {
      metrics.count(op === "put" ? "routeWrites" : "routeDeletes");
      const at = now();
      metrics.published(receivedAt === undefined ? undefined : at - receivedAt, at);
    },
    touched: (services: readonly string[]) => {
      for (const service of services) {
        if (!samePorts(state.servicePorts(service), portsOf(state, service)))
          markService(service, receivedAt);
      }
    },
  });

  const publisher = new ServicePublisher({
    cache,
    writer,
    cluster,
    valve: options.valve,
    logger,
    metrics,
    now,
    timers: options.timers,
    onHoldOver: options.onHoldOver,
  });

  /** Reconciles every dirty Service; false when publishing stopped part-way. Throws on a failed write. */
  const reconcileDirty = async (state: StoredState, going: () => boolean): Promise<boolean> => {
    const batch = [...dirty].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    dirty.clear();
    for (const [index, [service, receivedAt]] of batch.entries()) {
      if (!going()) {
        for (const [rest, at] of batch.slice(index)) markService(rest, at);
        return false;
      }
      try {
        // A deleted Service's record waits for the route writes only when they stop referencing it: a
        // route that still does (a backendRef to a Service this cluster lacks) is not rewritten.
        await publisher.reconcile(service, portsOf(state, service), state, receivedAt, {
          keepWhileRouted: routesPending && desired?.ports.has(service) !== true,
          tlsPorts: tlsPortsOf(service),
        });
      } catch (error) {
        for (const [rest, at] of batch.slice(index)) markService(rest, at);
        throw new StoreWriteError(`write ${service}`, error);
      }
    }
    return true;
  };

  return {
    markService,
    markRoutes(receivedAt: number | undefined) {
      routesDirty = true;
      if (receivedAt !== undefined) routesReceivedAt = Math.min(routesReceivedAt ?? receivedAt, receivedAt);
    },
    /** Forget what the store holds: the next pass loads it and compares everything. */
    reload() {
      stored = undefined;
      certificates.reload();
      clientValidations.reload();
      backendTls.reload();
    },
    /** How many Service records the store holds, as this pass last wrote or loaded them; undefined before. */
    get storedServices(): number | undefined {
      return stored?.services.size;
    },
    get idle() {
      return dirty.size === 0 && !routesDirty && !routesPending && stored !== undefined;
    },
    get dirtyServices() {
      return dirty.size;
    },
    /** The Services waiting, and whether routes are. */
    get unpublished() {
      return { services: dirty.size, routes: routesDirty || routesPending };
    },
    /** Services waiting, plus one for routes waiting. */
    get pending() {
      return dirty.size + (routesDirty || routesPending ? 1 : 0);
    },
    /** The store was loaded since the last reload(). */
    get loaded() {
      return stored !== undefined;
    },
    get desired() {
      return desired;
    },
    /** One pass; `going` says whether publishing still goes on (checked between writes). */
    async run(going: () => boolean): Promise<PassResult> {
      if (stored === undefined) {
        try {
          stored = StoredState.from(await writer.loadAll());
          metrics.count("fullResyncs");
        } catch (error) {
          return { kind: "failed", what: "load", error };
        }
        for (const service of stored.services.keys()) markService(service, undefined);
        for (const service of cache.services()) {
          markService(`${namespaceOf(service)}/${service.metadata.name}`, undefined);
        }
        routesDirty = true;
      }
      const state = stored;
      if (routesDirty) recomputeRoutes(state);
      if (dirty.size === 0 && !routesPending) return { kind: "done" };
      metrics.count("debounceFlushes");
      try {
        if (routesPending) {
          // A service port that names its BackendTLSPolicy finds the policy's record already there.
          try {
            await backendTls.write(desired?.backendTls.records ?? []);
          } catch (error) {
            throw new StoreWriteError("write backend TLS", error);
          }
          const routes = desired?.routes ?? new Map();
          const context = routeContext(state, routesReceivedAt);
          // Routes whose services are stored already first: an upgraded sync's annotation route must land
          // before its service record replaces the version 1 record that stood for that route.
          await writeRoutes(routes, state, context, "available-puts");
          if (!(await reconcileDirty(state, going))) return { kind: "stopped" };
          await writeRoutes(routes, state, context, "all");
          try {
            await certificates.write(desired?.certificates ?? []);
            await clientValidations.write(desired?.clientValidations ?? []);
          } catch (error) {
            throw new StoreWriteError("write certificates", error);
          }
          routesPending = false;
          routesReceivedAt = undefined;
        }
        if (!(await reconcileDirty(state, going))) return { kind: "stopped" };
      } catch (error) {
        if (error instanceof StoreWriteError) return { kind: "failed", what: error.what, error: error.cause };
        return { kind: "failed", what: "write", error };
      }
      return { kind: "done" };
    },
    stop() {
      publisher.stop();
    },
  };
}

export type PublishPass = ReturnType<typeof createPublishPass>;

function samePorts(a: ReadonlySet<number> | undefined, b: ReadonlySet<number> | undefined): boolean {
  const left = a ?? new Set<number>();
  const right = b ?? new Set<number>();
  return left.size === right.size && [...left].every((port) => right.has(port));
}

function samePolicies(
  a: ReadonlyMap<number, string> | undefined,
  b: ReadonlyMap<number, string> | undefined,
): boolean {
  if ((a?.size ?? 0) !== (b?.size ?? 0)) return false;
  for (const [port, policy] of a ?? []) if (b?.get(port) !== policy) return false;
  return true;
}

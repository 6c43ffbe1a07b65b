import type { Logger } from "../../lib/logger.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import { DEFAULT_ROUTE_SETTINGS, type RouteSettings } from "../translate/desired-routes.js";
import { namespaceOf } from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";
import { BackendTlsWrites } from "./backend-tls-writes.js";
import { CertificateWrites } from "./certificate-writes.js";
import { ClientValidationWrites } from "./client-validation-writes.js";
import { type DesiredState, DesiredStateSource } from "./desired-state.js";
import { type RouteWriteContext, StoreWriteError, storeWrite, writeRoutes } from "./route-writes.js";
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
 *
 * State: what the store holds (unloaded until the first pass after reload), the desired state last computed,
 * whether routes must be recomputed or written, and the dirty Services. Transitions: markService,
 * markRoutes, reload, run.
 */
export class PublishPass {
  readonly #options: PublishPassOptions;
  readonly #desiredState: DesiredStateSource;
  readonly #certificates: CertificateWrites;
  readonly #clientValidations: ClientValidationWrites;
  readonly #backendTls: BackendTlsWrites;
  readonly #publisher: ServicePublisher;
  /** What the store holds; undefined until loaded (then everything is compared again). */
  #stored: StoredState | undefined;
  #desired: DesiredState | undefined;
  /** The routes must be recomputed; when the earliest event still pending for them arrived. */
  #routesDirty = false;
  #routesReceivedAt: number | undefined;
  /** Desired routes not written yet (set when they change or a route write failed). */
  #routesPending = false;
  /** Services to recompute, with when the earliest watch event still pending for each arrived. */
  readonly #dirty = new Map<string, number | undefined>();

  constructor(options: PublishPassOptions) {
    const { cache, writer, cluster, logger, metrics, now } = options;
    this.#options = options;
    const settings = options.routeSettings ?? DEFAULT_ROUTE_SETTINGS;
    this.#desiredState = new DesiredStateSource({ cache, settings, cluster, logger, metrics });
    const storeKey = options.tlsStoreKey;
    this.#certificates = new CertificateWrites({ writer: writer.certificates, cluster, storeKey, logger });
    this.#clientValidations = new ClientValidationWrites({ writer: writer.certificates, cluster, logger });
    this.#backendTls = new BackendTlsWrites({ writer: writer.backendTls, cluster, storeKey, logger });
    this.#publisher = new ServicePublisher({
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
  }

  markService(service: string, receivedAt: number | undefined): void {
    const earlier = this.#dirty.get(service);
    this.#dirty.set(service, earlier === undefined ? receivedAt : Math.min(earlier, receivedAt ?? earlier));
  }

  markRoutes(receivedAt: number | undefined): void {
    this.#routesDirty = true;
    if (receivedAt !== undefined)
      this.#routesReceivedAt = Math.min(this.#routesReceivedAt ?? receivedAt, receivedAt);
  }

  /** Forget what the store holds: the next pass loads it and compares everything. */
  reload(): void {
    this.#stored = undefined;
    this.#certificates.reload();
    this.#clientValidations.reload();
    this.#backendTls.reload();
  }

  /** How many Service records the store holds, as this pass last wrote or loaded them; undefined before. */
  get storedServices(): number | undefined {
    return this.#stored?.services.size;
  }

  get idle(): boolean {
    return this.#dirty.size === 0 && !this.#routesDirty && !this.#routesPending && this.#stored !== undefined;
  }

  get dirtyServices(): number {
    return this.#dirty.size;
  }

  /** The Services waiting, and whether routes are. */
  get unpublished(): { services: number; routes: boolean } {
    return { services: this.#dirty.size, routes: this.#routesDirty || this.#routesPending };
  }

  /** Services waiting, plus one for routes waiting. */
  get pending(): number {
    return this.#dirty.size + (this.#routesDirty || this.#routesPending ? 1 : 0);
  }

  /** The store was loaded since the last reload(). */
  get loaded(): boolean {
    return this.#stored !== undefined;
  }

  get desired(): DesiredState | undefined {
    return this.#desired;
  }

  /** One pass; `going` says whether publishing still goes on (checked between writes). */
  async run(going: () => boolean): Promise<PassResult> {
    const state = this.#stored ?? (await this.#load());
    if (!(state instanceof StoredState)) return state;
    if (this.#routesDirty) this.#recomputeRoutes(state);
    if (this.#dirty.size === 0 && !this.#routesPending) return { kind: "done" };
    this.#options.metrics.count("debounceFlushes");
    try {
      if (this.#routesPending && !(await this.#writeRoutes(state, going))) return { kind: "stopped" };
      if (!(await this.#reconcileDirty(state, going))) return { kind: "stopped" };
    } catch (error) {
      if (error instanceof StoreWriteError) return { kind: "failed", what: error.what, error: error.cause };
      return { kind: "failed", what: "write", error };
    }
    return { kind: "done" };
  }

  stop(): void {
    this.#publisher.stop();
  }

  /** Reads what the store holds; every stored and every cached Service is dirty then, and the routes. */
  async #load(): Promise<StoredState | PassResult> {
    try {
      this.#stored = StoredState.from(await this.#options.writer.loadAll());
      this.#options.metrics.count("fullResyncs");
    } catch (error) {
      return { kind: "failed", what: "load", error };
    }
    for (const service of this.#stored.services.keys()) this.markService(service, undefined);
    for (const service of this.#options.cache.services()) {
      this.markService(`${namespaceOf(service)}/${service.metadata.name}`, undefined);
    }
    this.#routesDirty = true;
    return this.#stored;
  }

  #recomputeRoutes(state: StoredState): void {
    const before = this.#desired;
    const desired = this.#desiredState.compute((id) => state.route(id));
    this.#desired = desired;
    this.#routesDirty = false;
    this.#routesPending = true;
    const services = [...(before?.ports.keys() ?? []), ...desired.ports.keys()];
    services.push(...(before?.backendTls.ports.keys() ?? []), ...desired.backendTls.ports.keys());
    for (const service of new Set(services)) {
      const tlsChanged = !samePolicies(before?.backendTls.ports.get(service), this.#tlsPortsOf(service));
      if (tlsChanged || !samePorts(before?.ports.get(service), desired.ports.get(service)))
        this.markService(service, this.#routesReceivedAt);
    }
    try {
      this.#options.onDesired?.(desired);
    } catch (error) {
      this.#options.logger.error("onDesired threw", { error });
    }
  }

  /**
   * Writes the pending routes with the records around them (BackendTLSPolicies first, then the routes whose
   * Services are stored, the dirty Services, the other routes and removals, the certificates); false when
   * publishing stopped part-way. Throws StoreWriteError on a failed write.
   */
  async #writeRoutes(state: StoredState, going: () => boolean): Promise<boolean> {
    // A service port that names its BackendTLSPolicy finds the policy's record already there.
    await storeWrite("write backend TLS", () =>
      this.#backendTls.write(
        this.#desired?.backendTls.records ?? [],
        this.#desired?.backendTls.clients ?? [],
      ),
    );
    const routes = this.#desired?.routes ?? new Map();
    const context = this.#routeContext(state, this.#routesReceivedAt);
    // Routes whose services are stored already first: an upgraded sync's annotation route must land
    // before its service record replaces the version 1 record that stood for that route.
    await writeRoutes(routes, state, context, "available-puts");
    if (!(await this.#reconcileDirty(state, going))) return false;
    await writeRoutes(routes, state, context, "all");
    await storeWrite("write certificates", async () => {
      await this.#certificates.write(this.#desired?.certificates ?? []);
      await this.#clientValidations.write(this.#desired?.clientValidations ?? []);
    });
    this.#routesPending = false;
    this.#routesReceivedAt = undefined;
    return true;
  }

  #routeContext(state: StoredState, receivedAt: number | undefined): RouteWriteContext {
    const { writer, metrics, now } = this.#options;
    return {
      writer,
      written: (op: "put" | "delete") => {
        metrics.count(op === "put" ? "routeWrites" : "routeDeletes");
        const at = now();
        metrics.published(receivedAt === undefined ? undefined : at - receivedAt, at);
      },
      touched: (services: readonly string[]) => {
        for (const service of services) {
          if (!samePorts(state.servicePorts(service), this.#portsOf(state, service)))
            this.markService(service, receivedAt);
        }
      },
    };
  }

  /** Reconciles every dirty Service; false when publishing stopped part-way. Throws on a failed write. */
  async #reconcileDirty(state: StoredState, going: () => boolean): Promise<boolean> {
    const batch = [...this.#dirty].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    this.#dirty.clear();
    for (const [index, [service, receivedAt]] of batch.entries()) {
      if (!going()) {
        for (const [rest, at] of batch.slice(index)) this.markService(rest, at);
        return false;
      }
      try {
        // A deleted Service's record waits for the route writes only when they stop referencing it: a
        // route that still does (a backendRef to a Service this cluster lacks) is not rewritten.
        await this.#publisher.reconcile(service, this.#portsOf(state, service), state, receivedAt, {
          keepWhileRouted: this.#routesPending && this.#desired?.ports.has(service) !== true,
          tlsPorts: this.#tlsPortsOf(service),
        });
      } catch (error) {
        for (const [rest, at] of batch.slice(index)) this.markService(rest, at);
        throw new StoreWriteError(`write ${service}`, error);
      }
    }
    return true;
  }

  /** The ports a Service's record serves: those the desired routes and the stored routes reference. */
  #portsOf(state: StoredState, service: string): Set<number> {
    return new Set([...(this.#desired?.ports.get(service) ?? []), ...state.referencedPorts(service)]);
  }

  /** The BackendTLSPolicy in force per port of a Service: its record says `https` there. */
  #tlsPortsOf(service: string): ReadonlyMap<number, string> | undefined {
    return this.#desired?.backendTls.ports.get(service);
  }
}

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

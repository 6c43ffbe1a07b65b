import type { Logger } from "../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../lib/warn-once.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";
import { decodeStoredService } from "../../store/stored-records.js";
import type { SyncMetrics } from "../metrics.js";
import type { KubeService } from "../translate/kube-objects.js";
import { serviceRecordOf } from "../translate/service-record.js";
import { steeringOf } from "../translate/steering-annotations.js";
import type { ClusterCache } from "../translate/types.js";
import type { SafetyValve, ValveVerdict } from "./safety-valve.js";
import type { StoredState } from "./stored-state.js";
import type { Timers } from "./timers.js";

export interface ServicePublisherOptions {
  readonly cache: ClusterCache;
  readonly writer: ClusterWriter;
  readonly cluster: string;
  readonly valve: SafetyValve;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  readonly now: () => number;
  readonly timers: Timers;
  /** The safety valve's hold on this Service is over: recompute it. */
  readonly onHoldOver: (namespace: string, name: string) => void;
}

/** How a Service's record is reconciled: whether it waits for the routes, and its BackendTLSPolicies. */
export interface ReconcileOptions {
  /** A Service gone from the cache keeps its record while the stored routes still reference it. */
  readonly keepWhileRouted?: boolean;
  /** Port number → the BackendTLSPolicy in force there (service-record.ts). */
  readonly tlsPorts?: ReadonlyMap<number, string> | undefined;
}

/**
 * Brings one Service's record in the store to what the cache says now (the reconciler decides when). Every
 * write recomputes the Service's whole record from the cache (docs/design.md, translation rule 9: never
 * deltas) and is skipped when its serialised form equals what the store holds. A Service no route
 * references, or one gone from the cache, has no record. A mass removal the safety valve holds is
 * recomputed once its hold time is over: its state is the hold timer per Service held.
 */
export class ServicePublisher {
  readonly #options: ServicePublisherOptions;
  /** The Services the safety valve holds, each with the timer that recomputes it when the hold is over. */
  readonly #holdTimers = new Map<string, unknown>();
  readonly #invalid: WarnOnce;

  constructor(options: ServicePublisherOptions) {
    this.#options = options;
    this.#invalid = createWarnOnce(options.logger);
  }

  /**
   * Recomputes `service` (`ns/name`) from the cache with the port numbers routes reference, then puts,
   * removes or keeps its record; `stored` is updated in place. Throws when the store write fails.
   * `receivedAt`: when the watch event that made it dirty arrived, for the event-to-published latency.
   */
  async reconcile(
    service: string,
    ports: ReadonlySet<number>,
    stored: StoredState,
    receivedAt?: number,
    { keepWhileRouted = false, tlsPorts }: ReconcileOptions = {},
  ): Promise<void> {
    const { cache, cluster } = this.#options;
    const [namespace = "", name = ""] = service.split("/");
    const found = cache.service(namespace, name);
    // A deleted Service whose stored routes are about to go: its record goes after them, not before.
    if (!found && keepWhileRouted && stored.referencedPorts(service).size > 0) return;
    const result = found
      ? serviceRecordOf(cluster, found, cache.slicesOf(namespace, name), ports, tlsPorts)
      : { ok: true as const, value: undefined };
    if (!result.ok) {
      // A record routers would refuse: keep what is published, say why once.
      this.#invalid.warn(service, result.error, "service record left unchanged: it does not validate", {
        cluster,
        service,
        reason: result.error,
      });
      return;
    }
    this.#invalid.clear(service);
    this.#reportSteering(service, found);
    if (result.value === undefined) await this.#remove(service, stored, receivedAt);
    else await this.#publish(service, result.value, stored, receivedAt);
  }

  /** Cancels every pending hold. */
  stop(): void {
    for (const handle of this.#holdTimers.values()) this.#options.timers.clearTimeout(handle);
    this.#holdTimers.clear();
  }

  async #remove(service: string, stored: StoredState, receivedAt: number | undefined): Promise<void> {
    this.#clearHold(service);
    if (!stored.services.has(service)) return;
    await this.#options.writer.removeService(service);
    stored.deleteService(service);
    this.#options.metrics.count("deletes");
    this.#written(receivedAt);
    this.#options.logger.info("service removed", { cluster: this.#options.cluster, service });
  }

  async #publish(
    service: string,
    record: ServiceRecordV2,
    stored: StoredState,
    receivedAt: number | undefined,
  ): Promise<void> {
    const { cluster, metrics, now } = this.#options;
    const serialised = serializeServiceRecordV2(record);
    const previousRaw = stored.services.get(service);
    if (previousRaw === serialised) {
      this.#clearHold(service);
      metrics.count("skippedUnchanged");
      return;
    }
    const previous =
      previousRaw === undefined ? undefined : decodeStoredService(cluster, service, previousRaw);
    const verdict = this.#options.valve.judge(service, previous?.record, record, now());
    if (verdict.action === "hold") {
      this.#hold(service, verdict);
      return;
    }
    this.#clearHold(service);
    await this.#options.writer.putService(record);
    stored.setService(service, serialised);
    metrics.count("writes");
    this.#written(receivedAt);
    this.#options.logger.debug("service published", { cluster, service });
  }

  /** The valve holds a mass removal: said once per hold, and the Service recomputed when it is over. */
  #hold(service: string, verdict: Extract<ValveVerdict, { action: "hold" }>): void {
    if (this.#holdTimers.has(service)) return;
    const { now, timers } = this.#options;
    this.#options.metrics.count("valveHolds");
    this.#options.logger.warn("mass endpoint removal held by the safety valve", {
      cluster: this.#options.cluster,
      service,
      before: verdict.before,
      after: verdict.after,
      releaseInMs: verdict.releaseAt - now(),
    });
    const handle = timers.setTimeout(
      () => {
        this.#holdTimers.delete(service);
        const [namespace = "", name = ""] = service.split("/");
        this.#options.onHoldOver(namespace, name);
      },
      Math.max(0, verdict.releaseAt - now()),
    );
    this.#holdTimers.set(service, handle);
  }

  #clearHold(service: string): void {
    this.#options.valve.clear(service);
    const handle = this.#holdTimers.get(service);
    if (handle !== undefined) {
      this.#options.timers.clearTimeout(handle);
      this.#holdTimers.delete(service);
    }
  }

  /** A malformed steering annotation: the record goes out without it (router default), said once. */
  #reportSteering(service: string, found: KubeService | undefined): void {
    const steering = found ? steeringOf(found) : undefined;
    if (steering && !steering.ok) {
      this.#invalid.warn(
        `steering ${service}`,
        steering.error,
        "steering annotation ignored: it does not parse",
        { cluster: this.#options.cluster, service, reason: steering.error },
      );
    } else this.#invalid.clear(`steering ${service}`);
  }

  #written(receivedAt: number | undefined): void {
    const at = this.#options.now();
    this.#options.metrics.published(receivedAt === undefined ? undefined : at - receivedAt, at);
  }
}

import type { Logger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";
import { decodeStoredService } from "../../store/stored-records.js";
import type { SyncMetrics } from "../metrics.js";
import type { KubeService } from "../translate/kube-objects.js";
import { serviceRecordOf } from "../translate/service-record.js";
import { steeringOf } from "../translate/steering-annotations.js";
import type { ClusterCache } from "../translate/types.js";
import type { SafetyValve } from "./safety-valve.js";
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

/** Brings one Service's record in the store to what the cache says now (the reconciler decides when). */
export interface ServicePublisher {
  /**
   * Recomputes `service` (`ns/name`) from the cache with the port numbers routes reference, then puts,
   * removes or keeps its record; `stored` is updated in place. Throws when the store write fails.
   * `receivedAt`: when the watch event that made it dirty arrived, for the event-to-published latency.
   */
  reconcile(
    service: string,
    ports: ReadonlySet<number>,
    stored: StoredState,
    receivedAt?: number,
    options?: {
      readonly keepWhileRouted?: boolean;
      /** Port number → the BackendTLSPolicy in force there (service-record.ts). */
      readonly tlsPorts?: ReadonlyMap<number, string> | undefined;
    },
  ): Promise<void>;
  /** Cancels every pending hold. */
  stop(): void;
}

/**
 * Every write recomputes the Service's whole record from the cache (docs/design.md, translation rule 9: never deltas) and is
 * skipped when its serialised form equals what the store holds. A Service no route references, or one
 * gone from the cache, has no record. A mass removal the safety valve holds is recomputed once its hold
 * time is over.
 */
export function createServicePublisher(options: ServicePublisherOptions): ServicePublisher {
  const { cache, writer, cluster, valve, logger, metrics, now, timers } = options;
  const holdTimers = new Map<string, unknown>();
  const invalid = createWarnOnce(logger);

  const written = (receivedAt: number | undefined) => {
    const at = now();
    metrics.published(receivedAt === undefined ? undefined : at - receivedAt, at);
  };

  const reconcile = async (
    service: string,
    ports: ReadonlySet<number>,
    stored: StoredState,
    receivedAt?: number,
    { keepWhileRouted = false, tlsPorts }: Parameters<ServicePublisher["reconcile"]>[4] = {},
  ) => {
    const [namespace = "", name = ""] = service.split("/");
    const found = cache.service(namespace, name);
    // A deleted Service whose stored routes are about to go: its record goes after them, not before.
    if (!found && keepWhileRouted && stored.referencedPorts(service).size > 0) return;
    const result = found
      ? serviceRecordOf(cluster, found, cache.slicesOf(namespace, name), ports, tlsPorts)
      : { ok: true as const, value: undefined };
    if (!result.ok) {
      // A record routers would refuse: keep what is published, say why once.
      invalid.warn(service, result.error, "service record left unchanged: it does not validate", {
        cluster,
        service,
        reason: result.error,
      });
      return;
    }
    invalid.clear(service);
    reportSteering(service, found);
    if (result.value === undefined) {
      clearHold(service);
      if (!stored.services.has(service)) return;
      await writer.removeService(service);
      stored.deleteService(service);
      metrics.count("deletes");
      written(receivedAt);
      logger.info("service removed", { cluster, service });
      return;
    }
    await publish(service, result.value, stored, receivedAt);
  };

  const publish = async (
    service: string,
    record: ServiceRecordV2,
    stored: StoredState,
    receivedAt: number | undefined,
  ) => {
    const serialised = serializeServiceRecordV2(record);
    const previousRaw = stored.services.get(service);
    if (previousRaw === serialised) {
      clearHold(service);
      metrics.count("skippedUnchanged");
      return;
    }
    const previous =
      previousRaw === undefined ? undefined : decodeStoredService(cluster, service, previousRaw);
    const verdict = valve.judge(service, previous?.record, record, now());
    if (verdict.action === "hold") {
      if (!holdTimers.has(service)) {
        metrics.count("valveHolds");
        logger.warn("mass endpoint removal held by the safety valve", {
          cluster,
          service,
          before: verdict.before,
          after: verdict.after,
          releaseInMs: verdict.releaseAt - now(),
        });
        const handle = timers.setTimeout(
          () => {
            holdTimers.delete(service);
            const [namespace = "", name = ""] = service.split("/");
            options.onHoldOver(namespace, name);
          },
          Math.max(0, verdict.releaseAt - now()),
        );
        holdTimers.set(service, handle);
      }
      return;
    }
    clearHold(service);
    await writer.putService(record);
    stored.setService(service, serialised);
    metrics.count("writes");
    written(receivedAt);
    logger.debug("service published", { cluster, service });
  };

  /** A malformed steering annotation: the record goes out without it (router default), said once. */
  const reportSteering = (service: string, found: KubeService | undefined) => {
    const steering = found ? steeringOf(found) : undefined;
    if (steering && !steering.ok) {
      invalid.warn(`steering ${service}`, steering.error, "steering annotation ignored: it does not parse", {
        cluster,
        service,
        reason: steering.error,
      });
    } else invalid.clear(`steering ${service}`);
  };

  const clearHold = (service: string) => {
    valve.clear(service);
    const handle = holdTimers.get(service);
    if (handle !== undefined) {
      timers.clearTimeout(handle);
      holdTimers.delete(service);
    }
  };

  return {
    reconcile,
    stop() {
      for (const handle of holdTimers.values()) timers.clearTimeout(handle);
      holdTimers.clear();
    },
  };
}

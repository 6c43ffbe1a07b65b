import type { Logger } from "../../lib/logger.js";
import { decodeServiceRecord, type ServiceRecord, serializeServiceRecord } from "../../store/records.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import type { KubeEndpointSlice, KubeService } from "../translate/kube-objects.js";
import type { ClusterCache, ExposureResult } from "../translate/types.js";
import type { SafetyValve } from "./safety-valve.js";
import type { Timers } from "./timers.js";

export type ExposeService = (
  cluster: string,
  service: KubeService,
  slices: readonly KubeEndpointSlice[],
) => ExposureResult;

export interface ServicePublisherOptions {
  readonly cache: ClusterCache;
  readonly writer: ClusterWriter;
  readonly cluster: string;
  readonly expose: ExposeService;
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
   * Recomputes `service` (`ns/name`) from the cache, then puts, removes or keeps its record. `stored` is what
   * the store holds, as serialised strings, and is updated in place. Throws when the store write fails.
   * `receivedAt`: when the watch event that made it dirty arrived, for the event-to-published latency.
   */
  reconcile(service: string, stored: Map<string, string>, receivedAt?: number): Promise<void>;
  /** Cancels every pending hold. */
  stop(): void;
}

/**
 * Every write recomputes the Service's whole record from the cache (DESIGN.md rule 9, never deltas) and is
 * skipped when its serialised form equals what the store holds. A mass removal the safety valve holds is
 * recomputed once its hold time is over.
 */
export function createServicePublisher(options: ServicePublisherOptions): ServicePublisher {
  const { cache, writer, cluster, expose, valve, logger, metrics, now, timers } = options;
  const holdTimers = new Map<string, unknown>();

  const written = (receivedAt: number | undefined) => {
    const at = now();
    metrics.published(receivedAt === undefined ? undefined : at - receivedAt, at);
  };

  const reconcile = async (service: string, store: Map<string, string>, receivedAt?: number) => {
    const [namespace = "", name = ""] = service.split("/");
    const found = cache.service(namespace, name);
    const result: ExposureResult = found
      ? expose(cluster, found, cache.slicesOf(namespace, name))
      : { kind: "not-exposed" };
    if (result.kind === "invalid") {
      // A malformed annotation on a Service that was serving keeps its last good record: a typo in
      // `edgeslice.io/hosts` must not take a working route down. The operator sees the warning and the
      // metric; deleting the Service or removing the annotation still withdraws it.
      metrics.count("invalidServices");
      logger.warn("service annotations invalid; keeping what is published", {
        cluster,
        service,
        reason: result.reason,
        keptPublished: store.has(service),
      });
      return;
    }
    if (result.kind === "not-exposed") {
      clearHold(service);
      if (!store.has(service)) return;
      await writer.remove(service);
      store.delete(service);
      metrics.count("deletes");
      written(receivedAt);
      logger.info("service removed", { cluster, service });
      return;
    }
    await publish(service, result.record, store, receivedAt);
  };

  const publish = async (
    service: string,
    record: ServiceRecord,
    store: Map<string, string>,
    receivedAt: number | undefined,
  ) => {
    const serialised = serializeServiceRecord(record);
    const previousRaw = store.get(service);
    if (previousRaw === serialised) {
      clearHold(service);
      metrics.count("skippedUnchanged");
      return;
    }
    const previous = previousRaw === undefined ? undefined : decodeServiceRecord(previousRaw);
    const verdict = valve.judge(service, previous?.ok ? previous.value : undefined, record, now());
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
    await writer.put(record);
    store.set(service, serialised);
    metrics.count("writes");
    written(receivedAt);
    logger.debug("service published", { cluster, service });
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

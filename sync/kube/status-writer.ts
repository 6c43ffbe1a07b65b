import type { Logger } from "../../lib/logger.js";
import type { SyncMetrics } from "../metrics.js";
import type { DesiredRoutes } from "../translate/desired-routes.js";
import { sameStatus, statusOf } from "../translate/object-status.js";
import { collectionPath, KINDS, type RouteKind } from "./kinds.js";
import type { KubeApi } from "./kube-api.js";
import { type StatusTarget, statusTargetKey, statusTargets } from "./status-targets.js";

export interface StatusWriterOptions {
  readonly api: KubeApi;
  /** The object as the informers cache it (status and resourceVersion included). */
  readonly cached: (kind: RouteKind, namespace: string | undefined, name: string) => object | undefined;
  /** Our GatewayClass controllerName, whose entries of HTTPRoute `status.parents` are ours. */
  readonly controllerName: string;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  /** Checked before each write: only the replica that publishes writes status. */
  readonly allowed?: () => boolean;
  /** After a write failed for another reason than a conflict, try everything again this much later. */
  readonly retryMs?: number;
  readonly now?: () => number;
}

export interface StatusWriter {
  /** The statuses every object should carry now; written in the background, the latest call wins. */
  update(statuses: DesiredRoutes["statuses"]): void;
  /** Waits for the write in progress; nothing is written after. */
  stop(): Promise<void>;
  /** Resolves once nothing is queued or being written (tests). */
  idle(): Promise<void>;
  /** How many objects' last writes are remembered (tests: the entries go with the objects). */
  remembered(): number;
}

const MAX_ATTEMPTS = 3;

/**
 * Writes the status subresource of our GatewayClasses, Gateways, HTTPRoutes and Ingresses (the leader only:
 * the reconciler hands desired states over while it publishes). Each object's status is merged with what it
 * carries (object-status.ts) and written only when that changes it; a 409 Conflict re-reads the object and
 * merges again, up to three times. Any other failure is logged, counted, and retried after `retryMs`.
 */
export function createStatusWriter(options: StatusWriterOptions): StatusWriter {
  return new RouteStatusWriter(options);
}

/**
 * The status writer (see createStatusWriter): the latest statuses waiting to be written, the pass writing
 * them (#drain, one at a time: update() during a pass queues the newer statuses for the next), the retry
 * timer after a failed pass, and what it last wrote per object.
 */
export class RouteStatusWriter implements StatusWriter {
  readonly #options: StatusWriterOptions;
  readonly #now: () => number;
  readonly #retryMs: number;
  /** The statuses to write next; undefined when there are none newer than the pass's. */
  #latest: DesiredRoutes["statuses"] | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #retryTimer: NodeJS.Timeout | undefined;
  /** What we last wrote per object, against which resourceVersion: skip it while the cache lags behind. */
  readonly #written = new Map<string, { resourceVersion: string; status: string }>();

  constructor(options: StatusWriterOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#retryMs = options.retryMs ?? 5_000;
  }

  update(statuses: DesiredRoutes["statuses"]): void {
    if (this.#stopped) return;
    // Newer statuses cover every object: a retry still pending would write older ones over them.
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#latest = statuses;
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    await this.#running;
  }

  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  remembered(): number {
    return this.#written.size;
  }

  #kick(): void {
    if (this.#running || this.#stopped || this.#latest === undefined) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      this.#kick();
    });
  }

  async #drain(): Promise<void> {
    while (this.#latest !== undefined && !this.#stopped) {
      const statuses = this.#latest;
      this.#latest = undefined;
      const failed = await this.#writeAll(statusTargets(statuses, this.#options.controllerName, this.#now));
      if (failed === undefined) return;
      if (failed && this.#latest === undefined && !this.#stopped) {
        if (this.#retryTimer) clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          this.update(statuses);
        }, this.#retryMs);
      }
    }
  }

  /** Writes every target: whether any write failed, undefined when stopped or no longer allowed midway. */
  async #writeAll(list: readonly StatusTarget[]): Promise<boolean | undefined> {
    const { metrics, logger } = this.#options;
    let failed = false;
    // Objects deleted or no longer ours leave the statuses: forget what was written to them.
    const current = new Set(list.map(statusTargetKey));
    for (const key of this.#written.keys()) if (!current.has(key)) this.#written.delete(key);
    for (const target of list) {
      if (this.#stopped || !(this.#options.allowed?.() ?? true)) return undefined;
      const ok = await this.#writeOne(target).catch((error: unknown) => {
        metrics.count("statusErrors");
        logger.warn("status write failed", { object: `${target.kind} ${target.name}`, error });
        return false;
      });
      failed ||= !ok;
    }
    return failed;
  }

  /** Writes one object's status if it differs; false when the write failed (retry later). */
  async #writeOne(target: StatusTarget): Promise<boolean> {
    const key = statusTargetKey(target);
    let object: unknown = this.#options.cached(target.kind, target.namespace, target.name);
    // Gone from the cache: a later object of the same name starts afresh.
    if (object === undefined) this.#written.delete(key);
    for (let attempt = 1; object !== undefined && attempt <= MAX_ATTEMPTS; attempt++) {
      const written = await this.#writeStatus(target, key, object);
      if (written !== "conflict") return written;
      // Someone else wrote it meanwhile: merge into the current object.
      const fresh = await this.#options.api.call("GET", objectPath(target), { timeoutMs: 10_000 });
      object = fresh.status === 200 ? fresh.body : undefined;
    }
    if (object !== undefined) {
      this.#options.metrics.count("statusErrors");
      this.#options.logger.warn("status write kept conflicting; trying again later", { object: key });
      return false;
    }
    return true;
  }

  /**
   * Merges the status into `object` and PUTs it, unless that changes nothing or is what was written last
   * against its resourceVersion: true when done (or the object is gone), false when the write failed,
   * "conflict" on a 409.
   */
  async #writeStatus(target: StatusTarget, key: string, object: unknown): Promise<boolean | "conflict"> {
    const { api, metrics, logger } = this.#options;
    const status = target.desired(object);
    if (sameStatus(statusOf(object), status)) return true;
    const resourceVersion = String(
      (object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion ?? "",
    );
    const serialised = JSON.stringify(status);
    const last = this.#written.get(key);
    if (last && last.resourceVersion === resourceVersion && last.status === serialised) return true;
    const { group, version } = KINDS[target.kind];
    const body = {
      ...(object as object),
      apiVersion: group === "" ? version : `${group}/${version}`,
      kind: target.kind,
      status,
    };
    const response = await api.call("PUT", `${objectPath(target)}/status`, { body, timeoutMs: 10_000 });
    if (response.status === 200 || response.status === 201) {
      this.#written.set(key, { resourceVersion, status: serialised });
      metrics.count("statusWrites");
      logger.debug("status written", { object: key });
      return true;
    }
    if (response.status === 404) {
      this.#written.delete(key);
      return true;
    }
    if (response.status === 409) return "conflict";
    metrics.count("statusErrors");
    logger.warn("status write failed", { object: key, status: response.status, body: response.body });
    return false;
  }
}

const objectPath = (target: StatusTarget) =>
  `${collectionPath(target.kind, target.namespace)}/${encodeURIComponent(target.name)}`;

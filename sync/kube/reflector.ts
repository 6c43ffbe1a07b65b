import type { BackoffPolicy } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { ApiStatusError, failureKind, statusOf } from "./api-errors.js";
import type { KubeApi } from "./kube-api.js";
import { listInPages } from "./list-pages.js";
import type { Reachability } from "./reachability.js";
import { createRetryPolicy } from "./retry-policy.js";
import { type OpenWatch, openWatch, type WatchEnd, type WatchEventType } from "./watch-stream.js";

/** How every reflector of a cluster watch runs; the defaults are client-go's reflector habits. */
export interface ReflectorTuning {
  readonly api: KubeApi;
  readonly logger: Logger;
  readonly reachability: Reachability;
  /** 300 by default: each watch asks the server to end it after [T, 2T) s, then resumes (client-go's min). */
  readonly watchTimeoutSeconds?: number | undefined;
  /** 30 s by default: a watch silent for its timeout plus this is half-dead, aborted and resumed. */
  readonly stallGraceMs?: number | undefined;
  /** Items per LIST page (limit/continue). */
  readonly pageSize?: number | undefined;
  /** After a failure the API server may recover from (unreachable, 5xx, 429, 401/403): 200 ms .. 1 s. */
  readonly retry?: BackoffPolicy | undefined;
  /** A 401/403 that persists this long (10 s by default) is reported as an RBAC problem, once. */
  readonly forbiddenReportMs?: number | undefined;
  readonly observer?: ReflectorObserver | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
}

/** What a reflector reports for metrics, labelled by its resource ("services", "endpointslices"). */
export interface ReflectorObserver {
  relisted?(resource: string, reason: string): void;
  watchRestarted?(resource: string, reason: string): void;
  failed?(resource: string, error: unknown): void;
}

export interface ReflectorTarget {
  /** Names the reflector in logs, e.g. "services (shop)". */
  readonly label: string;
  readonly resource: string;
  /** The collection path, e.g. /api/v1/namespaces/shop/services. */
  readonly path: string;
  readonly onUpsert: (object: unknown, receivedAt: number) => void;
  readonly onDelete: (object: unknown, receivedAt: number) => void;
}

export interface Reflector {
  readonly label: string;
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  readonly whenSynced: Promise<void>;
  /** Last list, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Watches restarted for a failure, a stall or an expired resourceVersion (not a server timeout). */
  readonly restarts: number;
  /** Since when the API server has refused this reflector (401/403), undefined when it has not. */
  readonly forbiddenSince: number | undefined;
}

/**
 * client-go's reflector over our own HTTP client, feeding the caller's cache directly (no second cache):
 * LIST in pages (limit/continue), then WATCH from the list's resourceVersion. A watch the server ends is
 * resumed from the last resourceVersion seen (events and bookmarks); only a 410 Gone (HTTP or ERROR event)
 * or a resourceVersion too large for the server lists again, and a relist fires deletes for what vanished
 * and upserts only for what changed. Failures are retried with a short jittered backoff that the first
 * success of any request after an outage cuts short; a watch older than that outage and silent since is
 * resumed at once (an API server that stopped keeps its open watches silent for up to 60 s).
 */
export function createReflector(target: ReflectorTarget, tuning: ReflectorTuning): Reflector {
  const { label, resource } = target;
  const { api, logger, reachability } = tuning;
  const now = tuning.now ?? Date.now;
  const random = tuning.random ?? Math.random;
  const timeoutSeconds = tuning.watchTimeoutSeconds ?? 300;
  const graceMs = tuning.stallGraceMs ?? 30_000;
  const pageSize = tuning.pageSize ?? 500;
  const policy = createRetryPolicy({
    label,
    logger,
    reachability,
    retry: tuning.retry,
    forbiddenReportMs: tuning.forbiddenReportMs,
    random,
    now,
  });
  const observer = tuning.observer ?? {};

  /** What the caller's cache holds from this reflector: key → resourceVersion, for relists. */
  const known = new Map<string, string>();
  let resourceVersion = "";
  let running = false;
  let synced = false;
  let lastEventAt: number | null = null;
  let restarts = 0;
  let loop: Promise<void> | undefined;
  let stopping = new AbortController();
  let waking = new AbortController();
  let current: OpenWatch | undefined;
  let markSynced: () => void = () => {};
  const whenSynced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const unsubscribe = reachability.onRecovered((outageStartedAt) => {
    waking.abort();
    waking = new AbortController();
    // A watch opened before the outage and silent since may hang on a server that went away.
    if (current && current.startedAt <= outageStartedAt && current.lastByteAt <= outageStartedAt) {
      current.abort("suspect");
    }
  });

  const deliver = (type: WatchEventType | "LISTED", object: unknown, receivedAt: number) => {
    const metadata = metadataOf(object);
    if (!metadata) return;
    lastEventAt = receivedAt;
    if (typeof metadata.resourceVersion === "string" && metadata.resourceVersion !== "") {
      resourceVersion = metadata.resourceVersion;
    }
    if (type === "BOOKMARK") return;
    // Written by every field manager, read by nothing here: the largest part of many objects.
    delete metadata.managedFields;
    const key = `${String(metadata.namespace ?? "")}/${String(metadata.name ?? "")}`;
    try {
      if (type === "DELETED") {
        known.delete(key);
        target.onDelete(object, receivedAt);
      } else {
        known.set(key, String(metadata.resourceVersion ?? ""));
        target.onUpsert(object, receivedAt);
      }
    } catch (error) {
      logger.error("the cache threw on a watch event", { informer: label, error });
    }
  };

  async function list(reason: string): Promise<void> {
    if (reason !== "initial") observer.relisted?.(resource, reason);
    const seen = new Set<string>();
    const listVersion = await listInPages(api, target.path, {
      pageSize,
      signal: stopping.signal,
      onPage: (page) => {
        if (page.restarted) seen.clear();
        reachability.reached();
        policy.authorised();
        const receivedAt = now();
        for (const item of page.items) {
          const metadata = metadataOf(item);
          if (!metadata) continue;
          const key = `${String(metadata.namespace ?? "")}/${String(metadata.name ?? "")}`;
          seen.add(key);
          if (known.get(key) === metadata.resourceVersion) continue;
          deliver("LISTED", item, receivedAt);
        }
      },
    });
    const receivedAt = now();
    for (const key of [...known.keys()]) {
      if (seen.has(key)) continue;
      const [namespace = "", name = ""] = key.split("/");
      deliver("DELETED", { metadata: { namespace: namespace || undefined, name } }, receivedAt);
    }
    resourceVersion = listVersion;
    lastEventAt = receivedAt;
    if (!synced) {
      synced = true;
      markSynced();
      logger.info("informer synced", { informer: label, objects: known.size });
    }
  }

  /** One watch, until it ends: the reason to list again, or undefined to resume. */
  async function watchOnce(): Promise<WatchEnd> {
    const watch = await openWatch(api, {
      path: target.path,
      resourceVersion,
      timeoutSeconds: Math.floor(timeoutSeconds * (1 + random())),
      graceMs,
      now,
      signal: stopping.signal,
      onEvent: deliver,
    });
    reachability.reached();
    policy.authorised();
    current = watch;
    try {
      return await watch.ended;
    } finally {
      current = undefined;
    }
  }

  const failed = (error: unknown) => {
    observer.failed?.(resource, error);
    return policy.failed(error, AbortSignal.any([stopping.signal, waking.signal]));
  };

  async function run(): Promise<void> {
    let listReason: string | undefined = "initial";
    while (running) {
      try {
        if (listReason !== undefined) {
          await list(listReason);
          listReason = undefined;
          policy.succeeded();
        }
        const end = await watchOnce();
        if (!running) return;
        // A watch that failed right after it opened keeps the backoff growing.
        if (end.kind !== "failed") policy.succeeded();
        const reason = end.kind === "aborted" ? end.reason : end.kind;
        observer.watchRestarted?.(resource, reason);
        if (end.kind === "timeout") {
          logger.debug("watch ended at its timeout; resuming", { informer: label, resourceVersion });
          continue;
        }
        if (end.kind !== "closed") restarts++;
        if (end.kind === "expired") {
          logger.info("watch expired; listing again", { informer: label, message: end.message });
          listReason = "expired";
        } else if (end.kind === "failed") {
          throw end.status === undefined
            ? end.error
            : new ApiStatusError(end.status, { message: (end.error as Error).message });
        } else if (end.kind === "closed" && !end.sawBytes) {
          // Ended at once without a byte: do not spin against a server that keeps doing so.
          logger.debug("the server ended the watch at once; resuming", { informer: label });
          await policy.pause(AbortSignal.any([stopping.signal, waking.signal]));
        } else if (end.kind === "stalled") {
          logger.info("watch stalled: no byte for its timeout plus the grace; resuming it", {
            informer: label,
            resourceVersion,
          });
        } else {
          logger.info("resuming the watch", { informer: label, reason, resourceVersion });
        }
      } catch (error) {
        if (!running) return;
        if (failureKind(error) === "expired") {
          restarts++;
          logger.info("resourceVersion expired; listing again", { informer: label, status: statusOf(error) });
          // A LIST itself answered 410: never spin on it.
          if (listReason !== undefined) await policy.pause(AbortSignal.any([stopping.signal, waking.signal]));
          listReason = "expired";
          continue;
        }
        await failed(error);
      }
    }
  }

  return {
    label,
    start() {
      if (running) return;
      running = true;
      stopping = new AbortController();
      loop = run();
    },
    async stop() {
      running = false;
      unsubscribe();
      stopping.abort();
      current?.abort("stopped");
      await loop;
    },
    get synced() {
      return synced;
    },
    whenSynced,
    get lastEventAt() {
      return lastEventAt;
    },
    get restarts() {
      return restarts;
    },
    get forbiddenSince() {
      return policy.forbiddenSince;
    },
  };
}

function metadataOf(object: unknown): Record<string, unknown> | undefined {
  if (typeof object !== "object" || object === null) return undefined;
  const metadata = (object as { metadata?: unknown }).metadata;
  return typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)
    : undefined;
}

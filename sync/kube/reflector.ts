export type { Reflector, ReflectorObserver, ReflectorTarget, ReflectorTuning } from "./reflector-types.js";

import { sleep } from "../../lib/async.js";
import { ApiStatusError, failureKind, statusOf } from "./api-errors.js";
import { KnownObjects } from "./known-objects.js";
import { listInPages } from "./list-pages.js";
import type { Reflector, ReflectorTarget, ReflectorTuning } from "./reflector-types.js";
import { createRetryPolicy } from "./retry-policy.js";
import { type OpenWatch, openWatch, type WatchEnd, type WatchEventType } from "./watch-stream.js";

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

  /** What the caller's cache holds from this reflector, for relists. */
  const known = new KnownObjects(target, logger, label);
  let resourceVersion = "";
  let running = false;
  let synced = false;
  let lastEventAt: number | null = null;
  let restarts = 0;
  let loop: Promise<void> | undefined;
  let stopping = new AbortController();
  let waking = new AbortController();
  /** Ends a wait early on stop() or when the API server answers again (both controllers are replaced). */
  const untilStoppedOrWoken = () => AbortSignal.any([stopping.signal, waking.signal]);
  let current: OpenWatch | undefined;
  let markSynced: () => void = () => {};
  const whenSynced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  let settled = false;
  let markSettled: () => void = () => {};
  const whenSettled = new Promise<void>((resolve) => {
    markSettled = () => {
      settled = true;
      resolve();
    };
  });
  let missing = false;
  /** Since when an optional kind's list has answered 404 (reset by a list that succeeds). */
  let notFoundSince: number | undefined;
  const forbiddenReportMs = tuning.forbiddenReportMs ?? 10_000;

  const unsubscribe = reachability.onRecovered((outageStartedAt) => {
    waking.abort();
    waking = new AbortController();
    // A watch opened before the outage and silent since may hang on a server that went away.
    if (current && current.startedAt <= outageStartedAt && current.lastByteAt <= outageStartedAt) {
      current.abort("suspect");
    }
  });

  const deliver = (type: WatchEventType | "LISTED", object: unknown, receivedAt: number) => {
    const metadata = known.deliver(type, object, receivedAt);
    if (!metadata) return;
    lastEventAt = receivedAt;
    if (typeof metadata.resourceVersion === "string" && metadata.resourceVersion !== "") {
      resourceVersion = metadata.resourceVersion;
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
          const { key, same } = known.unchanged(item);
          if (key !== undefined) seen.add(key);
          if (!same) deliver("LISTED", item, receivedAt);
        }
      },
    });
    const receivedAt = now();
    known.deleteAllBut(seen, receivedAt);
    resourceVersion = listVersion;
    lastEventAt = receivedAt;
    notFoundSince = undefined;
    // Its first list tells the optional kinds the kind is served, as a list after a 404 does.
    if (missing || !synced) {
      missing = false;
      target.optional?.onServed();
    }
    if (!synced) {
      synced = true;
      markSynced();
      markSettled();
      logger.info("informer synced", { informer: label, objects: known.size });
    }
  }

  /** An optional kind's list answered 404 (or a refusal by design): empty until it is served, then listed again. */
  async function notServed(why: "not served" | "refused"): Promise<void> {
    known.deleteAllBut(undefined, now());
    if (!missing) {
      missing = true;
      target.optional?.onMissing(why);
    }
    markSettled();
    await sleep(target.optional?.retryMs ?? 30_000, untilStoppedOrWoken());
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
    return policy.failed(error, untilStoppedOrWoken());
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
          await policy.pause(untilStoppedOrWoken());
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
        const notFound = target.optional !== undefined && statusOf(error) === 404;
        // Only before its first sync: a kind once read and then refused is a broken RBAC (or an API server's
        // start-up 403s), reported and retried as such, never emptied.
        const refusedByDesign =
          target.optional?.unreadableWhenRefused === true && !synced && failureKind(error) === "forbidden";
        if (notFound || refusedByDesign) {
          // A CRD removed while watched ends the watch with 404 too: list to find out.
          if (listReason === undefined) {
            listReason = "missing";
            continue;
          }
          if (notFound) {
            // Authorization runs before the API server looks for a handler: a 404 was authorised.
            policy.authorised();
            notFoundSince ??= now();
            // A restarting API server serves CRDs only once its apiextensions informers synced, answering 404
            // meanwhile: a kind it served keeps what it served until the 404 outlasts the grace.
            if (synced && !missing && now() - notFoundSince < forbiddenReportMs) {
              await policy.pause(untilStoppedOrWoken());
              continue;
            }
          }
          await notServed(notFound ? "not served" : "refused");
          continue;
        }
        if (failureKind(error) === "expired") {
          restarts++;
          logger.info("resourceVersion expired; listing again", { informer: label, status: statusOf(error) });
          // A LIST itself answered 410: never spin on it.
          if (listReason !== undefined) await policy.pause(untilStoppedOrWoken());
          listReason = "expired";
          continue;
        }
        await failed(error);
        const refusedSince = policy.forbiddenSince;
        if (
          target.optional &&
          !settled &&
          refusedSince !== undefined &&
          now() - refusedSince >= forbiddenReportMs
        ) {
          logger.warn("going on without a refused optional informer; it keeps retrying", { informer: label });
          markSettled();
        }
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
    get settled() {
      return settled;
    },
    whenSettled,
    get missing() {
      return missing;
    },
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

import { sleep } from "../../lib/async.js";
import { ApiStatusError, failureKind, statusOf } from "./api-errors.js";
import { KnownObjects } from "./known-objects.js";
import { listInPages } from "./list-pages.js";
import { ReflectorState } from "./reflector-state.js";
import {
  type Reflector,
  type ReflectorSettings,
  type ReflectorTarget,
  type ReflectorTuning,
  reflectorSettings,
} from "./reflector-types.js";
import { createRetryPolicy, type RetryPolicy } from "./retry-policy.js";
import { type OpenWatch, openWatch, type WatchEnd, type WatchEventType } from "./watch-stream.js";

/**
 * client-go's reflector over our own HTTP client, feeding the caller's cache directly (no second cache):
 * LIST in pages (limit/continue), then WATCH from the list's resourceVersion. A watch the server ends is
 * resumed from the last resourceVersion seen (events and bookmarks); only a 410 Gone (HTTP or ERROR event)
 * or a resourceVersion too large for the server lists again, and a relist fires deletes for what vanished
 * and upserts only for what changed. Failures are retried with a short jittered backoff that the first
 * success of any request after an outage cuts short; a watch older than that outage and silent since is
 * resumed at once (an API server that stopped keeps its open watches silent for up to 60 s).
 *
 * Its loop (#run) makes passes: list if #listReason says so, then watch until it ends (#watchEnded: resume
 * or list again); a failure of either goes to #recover.
 */
export class ListWatchReflector implements Reflector {
  readonly label: string;
  readonly #target: ReflectorTarget;
  readonly #tuning: ReflectorSettings;
  readonly #policy: RetryPolicy;
  /** What the caller's cache holds from this reflector, for relists. */
  readonly #known: KnownObjects;
  readonly #state = new ReflectorState();
  readonly #unsubscribe: () => void;
  #running = false;
  #loop: Promise<void> | undefined;
  /** Why the next pass lists first ("initial", "expired", "missing"); undefined: it resumes the watch. */
  #listReason: string | undefined;
  #stopping = new AbortController();
  #waking = new AbortController();
  #current: OpenWatch | undefined;

  constructor(target: ReflectorTarget, tuning: ReflectorTuning) {
    this.label = target.label;
    this.#target = target;
    const settings = reflectorSettings(tuning);
    this.#tuning = settings;
    this.#policy = createRetryPolicy({
      label: target.label,
      logger: settings.logger,
      reachability: settings.reachability,
      retry: settings.retry,
      forbiddenReportMs: settings.forbiddenReportMs,
      random: settings.random,
      now: settings.now,
    });
    this.#known = new KnownObjects(target, settings.logger, target.label);
    this.#unsubscribe = settings.reachability.onRecovered((at) => this.#recovered(at));
  }

  get synced(): boolean {
    return this.#state.synced;
  }
  get whenSynced(): Promise<void> {
    return this.#state.whenSynced;
  }
  get settled(): boolean {
    return this.#state.settled;
  }
  get whenSettled(): Promise<void> {
    return this.#state.whenSettled;
  }
  get missing(): boolean {
    return this.#state.missing;
  }
  get lastEventAt(): number | null {
    return this.#state.lastEventAt;
  }
  get restarts(): number {
    return this.#state.restarts;
  }
  get forbiddenSince(): number | undefined {
    return this.#policy.forbiddenSince;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = new AbortController();
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#unsubscribe();
    this.#stopping.abort();
    this.#current?.abort("stopped");
    await this.#loop;
  }

  /** Ends a wait early on stop() or when the API server answers again (both controllers are replaced). */
  #untilStoppedOrWoken(): AbortSignal {
    return AbortSignal.any([this.#stopping.signal, this.#waking.signal]);
  }

  #recovered(outageStartedAt: number): void {
    this.#waking.abort();
    this.#waking = new AbortController();
    // A watch opened before the outage and silent since may hang on a server that went away.
    const current = this.#current;
    if (current && current.startedAt <= outageStartedAt && current.lastByteAt <= outageStartedAt) {
      current.abort("suspect");
    }
  }

  async #run(): Promise<void> {
    this.#listReason = "initial";
    while (this.#running) {
      try {
        await this.#pass();
      } catch (error) {
        if (!this.#running) return;
        await this.#recover(error);
      }
    }
  }

  /** Lists if it must, then watches until the watch ends. */
  async #pass(): Promise<void> {
    if (this.#listReason !== undefined) {
      await this.#list(this.#listReason);
      this.#listReason = undefined;
      this.#policy.succeeded();
    }
    const end = await this.#watchOnce();
    if (!this.#running) return;
    await this.#watchEnded(end);
  }

  #deliver = (type: WatchEventType | "LISTED", object: unknown, receivedAt: number): void => {
    const metadata = this.#known.deliver(type, object, receivedAt);
    if (metadata) this.#state.delivered(metadata.resourceVersion, receivedAt);
  };

  async #list(reason: string): Promise<void> {
    if (reason !== "initial") this.#tuning.observer.relisted?.(this.#target.resource, reason);
    const seen = new Set<string>();
    const listVersion = await listInPages(this.#tuning.api, this.#target.path, {
      pageSize: this.#tuning.pageSize,
      signal: this.#stopping.signal,
      onPage: (page) => {
        if (page.restarted) seen.clear();
        this.#tuning.reachability.reached();
        this.#policy.authorised();
        const receivedAt = this.#tuning.now();
        for (const item of page.items) {
          const { key, same } = this.#known.unchanged(item);
          if (key !== undefined) seen.add(key);
          if (!same) this.#deliver("LISTED", item, receivedAt);
        }
      },
    });
    const receivedAt = this.#tuning.now();
    this.#known.deleteAllBut(seen, receivedAt);
    // Its first list tells the optional kinds the kind is served, as a list after a 404 does.
    if (this.#state.listed(listVersion, receivedAt)) this.#target.optional?.onServed();
    if (this.#state.markSynced()) {
      this.#tuning.logger.info("informer synced", { informer: this.label, objects: this.#known.size });
    }
  }

  /** One watch, until it ends. */
  async #watchOnce(): Promise<WatchEnd> {
    const watch = await openWatch(this.#tuning.api, {
      path: this.#target.path,
      resourceVersion: this.#state.resourceVersion,
      timeoutSeconds: Math.floor(this.#tuning.watchTimeoutSeconds * (1 + this.#tuning.random())),
      graceMs: this.#tuning.stallGraceMs,
      now: this.#tuning.now,
      signal: this.#stopping.signal,
      onEvent: this.#deliver,
    });
    this.#tuning.reachability.reached();
    this.#policy.authorised();
    this.#current = watch;
    try {
      return await watch.ended;
    } finally {
      this.#current = undefined;
    }
  }

  /** A watch ended: resume it (at once, or after a pause), list again (410 Gone), or throw its failure. */
  async #watchEnded(end: WatchEnd): Promise<void> {
    const { label } = this;
    const { resourceVersion } = this.#state;
    // A watch that failed right after it opened keeps the backoff growing.
    if (end.kind !== "failed") this.#policy.succeeded();
    const reason = end.kind === "aborted" ? end.reason : end.kind;
    this.#tuning.observer.watchRestarted?.(this.#target.resource, reason);
    if (end.kind === "timeout") {
      this.#tuning.logger.debug("watch ended at its timeout; resuming", { informer: label, resourceVersion });
      return;
    }
    if (end.kind !== "closed") this.#state.restarted();
    if (end.kind === "expired") {
      this.#tuning.logger.info("watch expired; listing again", { informer: label, message: end.message });
      this.#listReason = "expired";
    } else if (end.kind === "failed") {
      throw end.status === undefined
        ? end.error
        : new ApiStatusError(end.status, { message: (end.error as Error).message });
    } else if (end.kind === "closed" && !end.sawBytes) {
      // Ended at once without a byte: do not spin against a server that keeps doing so.
      this.#tuning.logger.debug("the server ended the watch at once; resuming", { informer: label });
      await this.#policy.pause(this.#untilStoppedOrWoken());
    } else if (end.kind === "stalled") {
      this.#tuning.logger.info("watch stalled: no byte for its timeout plus the grace; resuming it", {
        informer: label,
        resourceVersion,
      });
    } else {
      this.#tuning.logger.info("resuming the watch", { informer: label, reason, resourceVersion });
    }
  }

  /** A list or watch failed: find out whether the kind is served, list again after a 410, or back off. */
  async #recover(error: unknown): Promise<void> {
    const notFound = this.#target.optional !== undefined && statusOf(error) === 404;
    // Only before its first sync: a kind once read and then refused is a broken RBAC (or an API server's
    // start-up 403s), reported and retried as such, never emptied.
    const refusedByDesign =
      this.#target.optional?.unreadableWhenRefused === true &&
      !this.#state.synced &&
      failureKind(error) === "forbidden";
    if (notFound || refusedByDesign) return this.#unserved(notFound);
    if (failureKind(error) === "expired") {
      this.#state.restarted();
      this.#tuning.logger.info("resourceVersion expired; listing again", {
        informer: this.label,
        status: statusOf(error),
      });
      // A LIST itself answered 410: never spin on it.
      if (this.#listReason !== undefined) await this.#policy.pause(this.#untilStoppedOrWoken());
      this.#listReason = "expired";
      return;
    }
    this.#tuning.observer.failed?.(this.#target.resource, error);
    await this.#policy.failed(error, this.#untilStoppedOrWoken());
    const refusedSince = this.#policy.forbiddenSince;
    if (
      this.#target.optional &&
      !this.#state.settled &&
      refusedSince !== undefined &&
      this.#tuning.now() - refusedSince >= this.#tuning.forbiddenReportMs
    ) {
      this.#tuning.logger.warn("going on without a refused optional informer; it keeps retrying", {
        informer: this.label,
      });
      this.#state.settle();
    }
  }

  /** An optional kind answered 404, or refused by design: list to find out, keep it a while, or empty it. */
  async #unserved(notFound: boolean): Promise<void> {
    // A CRD removed while watched ends the watch with 404 too: list to find out.
    if (this.#listReason === undefined) {
      this.#listReason = "missing";
      return;
    }
    if (notFound) {
      // Authorization runs before the API server looks for a handler: a 404 was authorised.
      this.#policy.authorised();
      const since = this.#state.notFoundSince(this.#tuning.now());
      // A restarting API server serves CRDs only once its apiextensions informers synced, answering 404
      // meanwhile: a kind it served keeps what it served until the 404 outlasts the grace.
      if (
        this.#state.synced &&
        !this.#state.missing &&
        this.#tuning.now() - since < this.#tuning.forbiddenReportMs
      ) {
        await this.#policy.pause(this.#untilStoppedOrWoken());
        return;
      }
    }
    await this.#notServed(notFound ? "not served" : "refused");
  }

  /** Empty until the kind is served, then listed again. */
  async #notServed(why: "not served" | "refused"): Promise<void> {
    this.#known.deleteAllBut(undefined, this.#tuning.now());
    if (this.#state.markMissing()) this.#target.optional?.onMissing(why);
    this.#state.settle();
    await sleep(this.#target.optional?.retryMs ?? 30_000, this.#untilStoppedOrWoken());
  }
}

import { sleep } from "../../lib/async.js";
import { type Backoff, type BackoffPolicy, createBackoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { ApiStatusError, failureKind, statusOf } from "./api-errors.js";
import type { Reachability } from "./reachability.js";

export interface RetryPolicyOptions {
  /** Names the informer in logs. */
  readonly label: string;
  readonly logger: Logger;
  readonly reachability: Reachability;
  /** After a failure the API server may recover from (unreachable, 5xx, 429, 401/403): 200 ms .. 1 s. */
  readonly retry?: BackoffPolicy | undefined;
  /** A 401/403 that persists this long (10 s by default) is reported as an RBAC problem, once. */
  readonly forbiddenReportMs?: number | undefined;
  readonly random: () => number;
  readonly now: () => number;
}

/** How an informer waits after a failed list or watch, and what it says about it. */
export interface RetryPolicy {
  /** Logs `error` as its kind deserves and waits its backoff, cut short by `wake` or `stop`. */
  failed(error: unknown, signal: AbortSignal): Promise<void>;
  /** Waits the next backoff delay without counting a failure (a server that ends watches at once). */
  pause(signal: AbortSignal): Promise<void>;
  /** A request got through: the next failure starts a new backoff. */
  succeeded(): void;
  /** The server answered with 200: no longer refused. */
  authorised(): void;
  /** Since when the server has refused this informer (401/403), undefined when it has not. */
  readonly forbiddenSince: number | undefined;
}

const DEFAULT_RETRY: BackoffPolicy = { initialMs: 200, maxMs: 1_000 };
/** A request the server rejected for good (another 4xx): retried slowly, since a retry changes nothing. */
const REJECTED_RETRY: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000 };

/**
 * Short jittered retries for everything the API server recovers from by itself: a restart (refused
 * connections, then ~1 s of 403s before its RBAC cache is ready, then 5xx), overload (429, honouring
 * Retry-After). A refusal is an RBAC problem only once it persisted past `forbiddenReportMs`: then it is
 * logged at error level, once per streak. Any other 4xx backs off up to 30 s and is logged each time.
 */
export function createRetryPolicy(options: RetryPolicyOptions): RetryPolicy {
  return new InformerRetryPolicy(options);
}

/**
 * The retry policy (see createRetryPolicy) of one informer: its two backoffs (short for what the API server
 * recovers from, slow for a rejection) and its refusal streak (since when, and whether it was reported).
 */
export class InformerRetryPolicy implements RetryPolicy {
  readonly #options: RetryPolicyOptions;
  readonly #forbiddenReportMs: number;
  readonly #retry: Backoff;
  readonly #slowRetry: Backoff;
  #forbiddenSince: number | undefined;
  /** The refusal streak was logged as an RBAC problem (once per streak). */
  #forbiddenReported = false;

  constructor(options: RetryPolicyOptions) {
    this.#options = options;
    this.#forbiddenReportMs = options.forbiddenReportMs ?? 10_000;
    this.#retry = createBackoff(options.retry ?? DEFAULT_RETRY, options.random);
    this.#slowRetry = createBackoff(REJECTED_RETRY, options.random);
  }

  get forbiddenSince(): number | undefined {
    return this.#forbiddenSince;
  }

  async failed(error: unknown, signal: AbortSignal): Promise<void> {
    const kind = failureKind(error);
    let delayMs: number;
    if (kind === "forbidden") delayMs = this.#refused(error);
    else if (kind === "starting") delayMs = this.#starting(error);
    else if (kind === "unreachable") delayMs = this.#unreachable(error);
    else delayMs = this.#rejected(error);
    await sleep(delayMs, signal);
  }

  pause(signal: AbortSignal): Promise<void> {
    return sleep(this.#retry.next(), signal);
  }

  succeeded(): void {
    this.#retry.reset();
  }

  authorised(): void {
    if (this.#forbiddenReported)
      this.#options.logger.info("informer authorised again", { informer: this.#options.label });
    this.#forbiddenSince = undefined;
    this.#forbiddenReported = false;
    this.#slowRetry.reset();
  }

  /** A 401/403: the server answers, refused, not unreachable (a missing RBAC rule must not make it look down). */
  #refused(error: unknown): number {
    const { label, logger, now } = this.#options;
    const status = statusOf(error);
    this.#forbiddenSince ??= now();
    const delayMs = this.#retry.next();
    const refusedForMs = now() - this.#forbiddenSince;
    if (!this.#forbiddenReported && refusedForMs >= this.#forbiddenReportMs) {
      this.#forbiddenReported = true;
      logger.error("informer not authorised: check the token and RBAC (get, list, watch on its resource)", {
        informer: label,
        status,
        error,
        refusedForMs,
      });
    } else {
      logger.debug("informer refused; retrying", { informer: label, status, retryInMs: delayMs });
    }
    return delayMs;
  }

  /** The API server answered: not an outage. It names when to come back (Retry-After: 5). */
  #starting(error: unknown): number {
    const delayMs = Math.max(this.#retry.next(), retryAfterOf(error));
    this.#options.logger.debug("the API server is starting; retrying when it asks", {
      informer: this.#options.label,
      retryInMs: delayMs,
    });
    return delayMs;
  }

  #unreachable(error: unknown): number {
    const { label, logger, reachability } = this.#options;
    reachability.failed(error);
    const delayMs = Math.max(this.#retry.next(), retryAfterOf(error));
    const attempt = this.#retry.attempts;
    const fields = { informer: label, status: statusOf(error), error, retryInMs: delayMs, attempt };
    // The outage itself is logged once by the reachability tracker; each retry is detail.
    if (attempt === 1) logger.info("informer failed", fields);
    else logger.debug("informer failed", fields);
    return delayMs;
  }

  /** Another 4xx: a retry changes nothing soon, so it backs off up to 30 s and says so each time. */
  #rejected(error: unknown): number {
    const delayMs = this.#slowRetry.next();
    this.#options.logger.warn("informer failed", {
      informer: this.#options.label,
      status: statusOf(error),
      error,
      retryInMs: delayMs,
      attempt: this.#slowRetry.attempts,
    });
    return delayMs;
  }
}

/** The Retry-After of an API server answer, in ms (0 when none). */
function retryAfterOf(error: unknown): number {
  return error instanceof ApiStatusError ? (error.retryAfterSeconds ?? 0) * 1000 : 0;
}

import { sleep } from "../../lib/async.js";
import { type BackoffPolicy, createBackoff } from "../../lib/backoff.js";
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
  const { label, logger, reachability, now } = options;
  const forbiddenReportMs = options.forbiddenReportMs ?? 10_000;
  const retry = createBackoff(options.retry ?? DEFAULT_RETRY, options.random);
  const slowRetry = createBackoff(REJECTED_RETRY, options.random);
  let forbiddenSince: number | undefined;
  let forbiddenReported = false;

  return {
    async failed(error, signal) {
      const kind = failureKind(error);
      const status = statusOf(error);
      let delayMs: number;
      if (kind === "forbidden") {
        // The server answers: refused, not unreachable (a missing RBAC rule must not make it look down).
        forbiddenSince ??= now();
        delayMs = retry.next();
        const refusedForMs = now() - forbiddenSince;
        if (!forbiddenReported && refusedForMs >= forbiddenReportMs) {
          forbiddenReported = true;
          logger.error(
            "informer not authorised: check the token and RBAC (get, list, watch on its resource)",
            { informer: label, status, error, refusedForMs },
          );
        } else {
          logger.debug("informer refused; retrying", { informer: label, status, retryInMs: delayMs });
        }
      } else if (kind === "starting") {
        // The API server answered: not an outage. It names when to come back (Retry-After: 5).
        delayMs = Math.max(retry.next(), retryAfterOf(error));
        logger.debug("the API server is starting; retrying when it asks", {
          informer: label,
          retryInMs: delayMs,
        });
      } else if (kind === "unreachable") {
        reachability.failed(error);
        delayMs = Math.max(retry.next(), retryAfterOf(error));
        const fields = { informer: label, status, error, retryInMs: delayMs, attempt: retry.attempts };
        // The outage itself is logged once by the reachability tracker; each retry is detail.
        if (retry.attempts === 1) logger.info("informer failed", fields);
        else logger.debug("informer failed", fields);
      } else {
        delayMs = slowRetry.next();
        logger.warn("informer failed", {
          informer: label,
          status,
          error,
          retryInMs: delayMs,
          attempt: slowRetry.attempts,
        });
      }
      await sleep(delayMs, signal);
    },
    pause: (signal) => sleep(retry.next(), signal),
    succeeded() {
      retry.reset();
    },
    authorised() {
      if (forbiddenReported) logger.info("informer authorised again", { informer: label });
      forbiddenSince = undefined;
      forbiddenReported = false;
      slowRetry.reset();
    },
    get forbiddenSince() {
      return forbiddenSince;
    },
  };
}

/** The Retry-After of an API server answer, in ms (0 when none). */
function retryAfterOf(error: unknown): number {
  return error instanceof ApiStatusError ? (error.retryAfterSeconds ?? 0) * 1000 : 0;
}

import type { Logger } from "../../../lib/logger.js";
import type { RouterError } from "../http/errors.js";
import type { RouterMetrics, UpstreamErrorKind } from "../observability/metrics.js";
import type { Balancer } from "../selection/balancer.js";
import type { PassiveEjection } from "../selection/ejection.js";
import type { Backend, Selection } from "../selection/selection.js";

/**
 * The proxy policy shared by every transport (the web path in app/web-proxy.ts, the Node-native proxy in
 * node/proxy.ts, Node upgrades in node/handshake.ts): which backend to try, when another attempt is allowed,
 * what a failure counts as for metrics and ejection, and which error the client gets. Transports only send
 * one attempt and report it as an AttemptResult.
 */
export interface ProxySettings {
  /**
   * Per attempt: time to response headers. Envoy's model: it starts once the whole request was sent upstream
   * (the connect has its own bound), so a client slow to send its body is never charged to the backend.
   */
  readonly tryTimeoutMs: number;
  /** Whole request across retries, until response headers; it starts as the per-try timeout does. */
  readonly totalTimeoutMs: number;
  /** Further attempts on other backends. */
  readonly retries: number;
  /** Longest wait for the next bytes of the client's body before it is answered 408 (CLIENT_BODY_IDLE_TIMEOUT_MS). */
  readonly clientBodyIdleTimeoutMs: number;
  /** A route rule's HTTPRouteRetry (core/forwarding/rule-policy.ts); absent: the router's own retry rules. */
  readonly routeRetry?: RouteRetryPolicy;
}

/**
 * HTTPRouteRetry as the proxy applies it: a backend's answer whose status is in `codes` is retried as a
 * failure is, while another attempt may go; each retry waits at least `backoffMs`; and a retry may go back to a
 * backend already tried once every other was (a Service of one pod can be retried at all).
 */
export interface RouteRetryPolicy {
  readonly codes: ReadonlySet<number>;
  readonly backoffMs: number;
}

export interface PolicyDeps {
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly settings: ProxySettings;
}

/**
 * Why an attempt was cut short by the router itself: a timeout on the backend's side, or the client's doing
 * (it went away, or it stalled while sending its body: `client-stalled`).
 */
export type AbortCause = "try-timeout" | "total-timeout" | "client-gone" | "client-stalled";

export type AttemptFailure = {
  readonly ok: false;
  /** "client": the client's doing, never the backend's (no metrics of its, no ejection). */
  readonly kind: UpstreamErrorKind | "client";
  readonly stop: boolean;
  /** With kind "client": it stalled sending its body (408) rather than went away. */
  readonly stalled?: boolean;
};
export type AttemptResult<T> = { readonly ok: true; readonly value: T } | AttemptFailure;
export type ProxyResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: RouterError };

/**
 * Request body bytes kept while streaming so that the body can be sent again whole: to another backend after a
 * failed attempt (the web path), or on a fresh connection when a reused one was found closed before any answer
 * (Node's HTTP/1.1 client). A larger body streams once and is never sent again.
 */
export const MAX_REPLAYABLE_BODY_BYTES = 64 * 1024;

/** RFC 9110 §9.2.2: repeating these has the same effect as sending them once. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** 502/503/504 from a backend count as its failure for ejection (a gateway-failure detector). */
const GATEWAY_FAILURE = new Set([502, 503, 504]);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/**
 * Nothing reached the backend on a connect error: any method may go elsewhere. Otherwise only an
 * idempotent one (RFC 9110 §9.2.2), and in both cases only while its body can be sent again in full.
 */
export function mayRetry(
  kind: UpstreamErrorKind | "client",
  idempotent: boolean,
  canResend: boolean,
): boolean {
  if (kind === "client" || !canResend) return false;
  return kind === "connect" || idempotent;
}

/**
 * The error the client gets once no attempt produced a response. A client that went away gets nothing; it is
 * counted apart (client_closed), never as a 5xx.
 */
export function failureError(last: UpstreamErrorKind | "client", stalled = false): RouterError {
  if (last === "client") return stalled ? "request_timeout" : "client_closed";
  return last === "timeout" ? "upstream_timeout" : "bad_gateway";
}

/** An attempt whose answer a rule's retry dropped (RetryLoop.retriesAnswer): the loop already counted it. */
export const ANSWER_RETRIED = Object.freeze({ retried: true as const });
export type AnswerRetried = typeof ANSWER_RETRIED;

/** What an attempt asks before it passes an answer on (core/forwarding/retry-loop.ts RetryLoop). */
export interface AnswerRetries {
  /** True: drop this answer, another attempt goes (`remainingMs`: the request's time left). */
  retriesAnswer(
    backend: Backend,
    status: number,
    request: { canResend(): boolean },
    remainingMs: number,
  ): boolean;
}

/** One request as a transport runs it (an object rather than closures: this runs once per request). */
export interface Attempts<T> {
  readonly method: string;
  /** The whole body can still be sent again (nothing read yet, or everything read is still held). */
  canResend(): boolean;
  /**
   * Sends once; resolves when the response headers arrived or the attempt failed, or with ANSWER_RETRIED when
   * `answers` had the answer dropped for a retry.
   */
  attempt(backend: Backend, answers: AnswerRetries): Promise<AttemptResult<T> | AnswerRetried>;
  /** Waits `ms` before a retry (a rule's backoff); resolves early when the request is cut meanwhile. */
  wait?(ms: number): Promise<void>;
}

/** Records a backend's answer for ejection: 502/503/504 are its failure, anything else a success. */
export function noteAnswer(backend: Backend, status: number, deps: PolicyDeps): void {
  if (GATEWAY_FAILURE.has(status)) noteFailure(backend, deps);
  else deps.ejection.recordSuccess(backend.address);
  // A steered Service's cluster health counts any 5xx (steering/cluster-track.ts).
  if (backend.track?.answered(status)) clusterSteppedOver(backend, deps);
}

/**
 * Records a failed attempt (metrics, ejection, log) and says whether to stop: `cause` is set when the router
 * cut the attempt itself; `connectFailure` when nothing reached the backend.
 */
export function noteAttemptFailure(
  backend: Backend,
  cause: AbortCause | undefined,
  connectFailure: boolean,
  error: unknown,
  deps: PolicyDeps,
): AttemptFailure {
  if (cause === "client-gone" || cause === "client-stalled") return abortedBeforeAttempt(cause);
  if (cause !== undefined) {
    deps.metrics.upstreamErrors.timeout++;
    noteTransportFailure(backend, deps);
    deps.logger.debug("upstream attempt timed out", { backend: backend.address, limit: cause });
    return { ok: false, kind: "timeout", stop: cause === "total-timeout" };
  }
  const kind: UpstreamErrorKind = connectFailure ? "connect" : "transport";
  deps.metrics.upstreamErrors[kind]++;
  noteTransportFailure(backend, deps);
  deps.logger.debug("upstream attempt failed", { backend: backend.address, kind, error });
  return { ok: false, kind, stop: false };
}

/**
 * An upgrade goes to another backend only while nothing reached this one: once its handshake was sent, the
 * backend may have acted on it. `mayHaveReached` says whether it could have.
 */
export function upgradeFailure(failure: AttemptFailure, mayHaveReached: boolean): AttemptFailure {
  return mayHaveReached && !failure.stop ? { ...failure, stop: true } : failure;
}

/** An attempt that could not start because the request was already cut. */
export function abortedBeforeAttempt(cause: AbortCause): AttemptFailure {
  if (cause === "client-gone") return CLIENT_GONE;
  if (cause === "client-stalled") return CLIENT_STALLED;
  return { ok: false, kind: "timeout", stop: true };
}

const CLIENT_GONE: AttemptFailure = { ok: false, kind: "client", stop: true };
const CLIENT_STALLED: AttemptFailure = { ok: false, kind: "client", stop: true, stalled: true };

/** A transport failure (connect, timeout, reset): the backend's for ejection, its cluster's when steered. */
function noteTransportFailure(backend: Backend, deps: PolicyDeps): void {
  noteFailure(backend, deps);
  if (backend.track?.failed()) clusterSteppedOver(backend, deps);
}

function clusterSteppedOver(backend: Backend, deps: PolicyDeps): void {
  deps.logger.warn("cluster stepped over: its attempts keep failing", {
    cluster: backend.cluster,
    health: backend.track?.health(backend.track.now()),
  });
}

function noteFailure(backend: Backend, deps: PolicyDeps): void {
  const ejected = deps.ejection.recordFailure(backend.address);
  if (ejected) {
    deps.metrics.ejections++;
    deps.logger.warn("backend ejected", {
      backend: backend.address,
      cluster: backend.cluster,
      durationMs: ejected.durationMs,
      ejections: ejected.ejections,
    });
  }
}

/** First tier with a backend that is neither ejected (within the cap) nor already tried. */
export function pickBackend(
  selection: Selection,
  deps: Pick<PolicyDeps, "balancer" | "ejection">,
  tried: ReadonlySet<string> | undefined,
): Backend | undefined {
  const excluded = deps.ejection.excluded(selection.addresses);
  const skip = mergeSkip(excluded, tried);
  for (const tier of selection.tiers) {
    const backend = deps.balancer.pick(tier.backends, skip);
    if (backend) return backend;
  }
  return undefined;
}

function mergeSkip(a: ReadonlySet<string>, b: ReadonlySet<string> | undefined): ReadonlySet<string> {
  if (!b || b.size === 0) return a;
  if (a.size === 0) return b;
  return new Set([...a, ...b]);
}

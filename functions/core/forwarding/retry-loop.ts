import type { RouterError } from "../http/errors.js";
import { attemptOutcome } from "../observability/metrics.js";
import type { RequestObservation } from "../observability/request-observation.js";
import type { Backend, Selection } from "../selection/selection.js";
import {
  type AnswerRetried,
  type AnswerRetries,
  type AttemptFailure,
  type AttemptResult,
  type Attempts,
  failureError,
  isIdempotent,
  mayRetry,
  type PolicyDeps,
  type ProxyResult,
  pickBackend,
} from "./proxy-policy.js";

/** What the loop asks of the request before another attempt. */
export interface Resendable {
  /** The whole body can still be sent again (nothing read yet, or everything read is still held). */
  canResend(): boolean;
}

/**
 * The attempts of one request as a small state machine: which backend goes next, what a settled attempt
 * counts as, whether another may follow, and the error once none did. withRetries (below) drives it with
 * promises; the Node exchange (node/exchange.ts) drives it from its client's callbacks, so a request
 * costs no promise per attempt. One loop, so both retry alike.
 */
export class RetryLoop implements AnswerRetries {
  readonly #selection: Selection;
  readonly #deps: PolicyDeps;
  readonly #idempotent: boolean;
  readonly #observation: RequestObservation | undefined;
  #started = 0;
  #tried: Set<string> | undefined;
  #last: AttemptFailure | undefined;
  /** When the current attempt left, on its cluster's clock: only for a steered Service's backends. */
  #sentAt = 0;

  /** `idempotent`: the request may be sent again after it reached a backend (RFC 9110 §9.2.2). */
  constructor(selection: Selection, idempotent: boolean, deps: PolicyDeps, observation?: RequestObservation) {
    this.#selection = selection;
    this.#deps = deps;
    this.#idempotent = idempotent;
    this.#observation = observation;
  }

  /** The backend of the next attempt, counted in flight until `settle` or `release`; undefined: none is left. */
  next(): Backend | undefined {
    const deps = this.#deps;
    if (this.#started > deps.settings.retries) return undefined;
    const backend = this.#pick();
    if (!backend) return undefined;
    if (this.#started > 0) deps.metrics.retries++;
    this.#started++;
    deps.balancer.acquire(backend.address);
    this.#observation?.tried(backend);
    if (backend.track) this.#sentAt = backend.track.now();
    return backend;
  }

  /**
   * A rule's HTTPRouteRetry (ProxySettings.routeRetry): whether the answer `status` of `backend` is dropped for
   * another attempt. Only for a status of the rule's codes, while another attempt may go (the count, an
   * idempotent method, a body that can be sent again: docs/design.md Router 3), a backend is left for it, and
   * the backoff ends before the request's time does (`remainingMs`). When true, the attempt is done here
   * (released, counted as answered) and the caller drops the answer and starts the next attempt after
   * `backoffMs()`; when false, the answer is the client's.
   */
  retriesAnswer(backend: Backend, status: number, request: Resendable, remainingMs: number): boolean {
    const deps = this.#deps;
    const policy = deps.settings.routeRetry;
    if (!policy?.codes.has(status) || this.#started > deps.settings.retries) return false;
    if (!this.#idempotent || !request.canResend() || remainingMs <= policy.backoffMs) return false;
    const tried = new Set(this.#tried);
    tried.add(backend.address);
    if (!pickBackend(this.#selection, deps, tried) && !pickBackend(this.#selection, deps, undefined))
      return false;
    this.settle(backend, { ok: true, value: status }, request);
    this.#triedOn(backend);
    return true;
  }

  /** The least wait before the next attempt: a rule's retry backoff, else none. */
  backoffMs(): number {
    return this.#started > 0 ? (this.#deps.settings.routeRetry?.backoffMs ?? 0) : 0;
  }

  /** The attempt on `backend` ended without a result (it threw): it is no longer in flight. */
  release(backend: Backend): void {
    // Long response bodies are not counted in flight: cheap to track and what p2c needs to steer away from
    // backends slow to answer.
    this.#deps.balancer.release(backend.address);
  }

  /** Records the attempt on `backend` (released, counted); true when another attempt may go. */
  settle(backend: Backend, result: AttemptResult<unknown>, request: Resendable): boolean {
    this.release(backend);
    this.#deps.metrics.attempted(this.#selection, backend.cluster, result.ok ? undefined : result.kind);
    const failure = result.ok ? undefined : result.kind;
    // A client gone is no outcome of the backend's: its attempt's span ends with the request's.
    if (this.#observation?.span && failure !== "client") this.#observation.settled(attemptOutcome(failure));
    const { track } = backend;
    if (result.ok) {
      track?.latency(track.now() - this.#sentAt);
      return false;
    }
    this.#last = result;
    if (result.stop || !mayRetry(result.kind, this.#idempotent, request.canResend())) return false;
    this.#triedOn(backend);
    return true;
  }

  #triedOn(backend: Backend): void {
    this.#tried ??= new Set();
    this.#tried.add(backend.address);
    if (backend.track) this.#skipCluster(backend.cluster, this.#tried);
  }

  /**
   * An untried backend first; with a rule's retry, once every one was tried, any again (HTTPRouteRetry asks
   * for the retries, and a Service of one pod has only that pod to retry on).
   */
  #pick(): Backend | undefined {
    const backend = pickBackend(this.#selection, this.#deps, this.#tried);
    if (backend || this.#deps.settings.routeRetry === undefined || !this.#tried) return backend;
    this.#tried = undefined;
    return pickBackend(this.#selection, this.#deps, undefined);
  }

  /**
   * A steered Service retries in the next cluster of its order, not on another pod of the one that failed: a
   * whole cluster failing is what steering is for, and it costs one attempt that way, not every retry.
   */
  #skipCluster(cluster: string, tried: Set<string>): void {
    for (const tier of this.#selection.tiers) {
      for (const other of tier.backends) if (other.cluster === cluster) tried.add(other.address);
    }
  }

  /** The client's error once no attempt produced a response. */
  failure(): { readonly ok: false; readonly error: RouterError } {
    return { ok: false, error: failureError(this.#last?.kind ?? "transport", this.#last?.stalled) };
  }
}

/**
 * Sends the request to one backend of the first tier that has a usable one, retrying on another backend
 * after a failure when mayRetry allows it. In flight, for p2c, means waiting for the response headers.
 */
export async function withRetries<T>(
  selection: Selection,
  attempts: Attempts<T>,
  deps: PolicyDeps,
  observation?: RequestObservation,
): Promise<ProxyResult<T>> {
  const loop = new RetryLoop(selection, isIdempotent(attempts.method), deps, observation);
  for (;;) {
    const backoff = loop.backoffMs();
    if (backoff > 0) await attempts.wait?.(backoff);
    const backend = loop.next();
    if (!backend) break;
    let result: AttemptResult<T> | AnswerRetried;
    try {
      result = await attempts.attempt(backend, loop);
    } catch (error) {
      loop.release(backend);
      throw error;
    }
    if ("retried" in result) continue;
    const again = loop.settle(backend, result, attempts);
    if (result.ok) return result;
    if (!again) break;
  }
  return loop.failure();
}

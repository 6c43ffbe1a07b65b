import type { Socket } from "node:net";
import type { ExchangeHead } from "../../lib/http-exchange.js";
import type { RequestContent } from "../../lib/http1/request-content.js";
import type { ProxyRoute } from "../app/request-pipeline.js";
import { type AttemptResult, isIdempotent, type PolicyDeps } from "../core/forwarding/proxy-policy.js";
import { RetryLoop } from "../core/forwarding/retry-loop.js";
import type { RouterError } from "../core/http/errors.js";
import type { Backend } from "../core/selection/selection.js";
import { Attempt, type AttemptOwner } from "./attempt.js";
import { refusedAttempt } from "./attempt-bounds.js";
import { type ClientSide, type ClientWatcher, REFUSED } from "./clients/client-side.js";
import type { Dispatchers } from "./dispatchers.js";
import { RequestBody } from "./request-body.js";

/** Who answers when no attempt produced a response (the pipeline's run: app/request-pipeline.ts). */
export interface ExchangeEnd {
  fail(error: RouterError): unknown;
}

/** A backend no dispatcher can carry the request to (an upgrade to an h2c backend): a 502, and no retry. */
const NOT_CARRIED: AttemptResult<never> = { ok: false, kind: "transport", stop: true };

/**
 * One proxied request, whichever front it came through and whichever protocol its backends speak: its attempts
 * (core/forwarding/retry-loop.ts: the retry budget, pod ejection, cluster health and steering, driven from the
 * dispatchers' callbacks rather than a promise per attempt), its deadline across them, its body (sent again
 * only while it can be had whole), and the one rule of cancellation: however the client goes away (RST_STREAM,
 * a TCP or TLS close, an HTTP/1.1 close, a timeout), its client side closes, and the attempt under way is cut,
 * which releases the backend's stream or connection.
 */
export class Exchange implements AttemptOwner, ClientWatcher {
  readonly client: ClientSide;
  readonly route: ProxyRoute;
  readonly deps: PolicyDeps;
  readonly body: RequestBody | undefined;
  /**
   * When the request must have its response head, across attempts. Envoy's model: the clock starts once the
   * whole request was sent upstream, so with a body it is set when the body went (a client slow to upload
   * is bounded by its own idle timeout, not charged to the backend); without one, at once.
   */
  deadline: number | undefined;
  current: Attempt | undefined;
  clientGone = false;
  readonly #dispatchers: Dispatchers;
  readonly #end: ExchangeEnd;
  readonly #loop: RetryLoop;
  readonly #headers: string[];
  readonly #content: RequestContent | undefined;
  readonly #refused: boolean;

  constructor(
    dispatchers: Dispatchers,
    client: ClientSide,
    route: ProxyRoute,
    deps: PolicyDeps,
    end: ExchangeEnd,
  ) {
    this.#dispatchers = dispatchers;
    this.client = client;
    this.route = route;
    this.deps = deps;
    this.#end = end;
    this.#headers = client.upstreamFields(route.forwarding);
    const content = client.content();
    this.#refused = content === REFUSED;
    this.#content = content === REFUSED ? undefined : content;
    const hasBody = this.#content !== undefined && this.#content.length !== 0;
    this.body = hasBody ? new RequestBody(client.bodySource, deps.settings) : undefined;
    this.deadline = this.body ? undefined : Date.now() + deps.settings.totalTimeoutMs;
    // An upgrade goes to another backend only when nothing reached this one: once it did, it may have acted.
    const idempotent = !client.upgrade && isIdempotent(client.method);
    this.#loop = new RetryLoop(route.selection, idempotent, deps, route.observation);
  }

  /** Starts the first attempt; the end hears the error once no attempt produced a response. */
  run(): void {
    // The request's framing cannot be read reliably (RFC 9112 §6.3): refused before any attempt.
    if (this.#refused) {
      this.#end.fail("bad_request");
      return;
    }
    this.client.watch(this);
    // A stream the client reset while the request was routed closed before the exchange listened for it.
    if (this.client.gone) this.clientGone = true;
    this.#next();
  }

  canResend(): boolean {
    return this.body === undefined || !this.body.consumed;
  }

  /** The client went away, or its answer closed whole: cut what still runs upstream. */
  clientClosed(): void {
    this.route.observation.finished(this.deps.metrics, performance.now(), this.body?.received ?? 0);
    this.route.logEnd?.();
    if (!this.client.gone) return;
    this.clientGone = true;
    this.current?.cut("client-gone");
  }

  clientLeft(): void {
    this.clientGone = true;
  }

  settled(backend: Backend, result: AttemptResult<number>): void {
    if (this.#loop.settle(backend, result, this)) this.#again();
    else if (!result.ok) this.#end.fail(this.#loop.failure().error);
  }

  /**
   * A rule's retry (HTTPRouteRetry) drops the answer `status` of `backend` for another attempt: the loop
   * settled the attempt already, and the next one goes after the rule's backoff. An upgrade is never sent twice.
   */
  retriesAnswer(backend: Backend, status: number): boolean {
    if (this.client.upgrade || !this.#loop.retriesAnswer(backend, status, this, this.#remaining()))
      return false;
    this.#again();
    return true;
  }

  /** The next attempt: never inside the last one's own callback, and after a rule's backoff when it has one. */
  #again(): void {
    const backoff = this.#loop.backoffMs();
    if (backoff > 0) setTimeout(() => this.#next(), backoff).unref();
    else queueMicrotask(() => this.#next());
  }

  /** The whole body went to `attempt`'s backend: from now on, waiting is the backend's time. */
  bodySent(attempt: Attempt): void {
    this.deadline ??= Date.now() + this.deps.settings.totalTimeoutMs;
    attempt.armTimer(this.deadline - Date.now());
  }

  /** A 101: the connections are joined, and the backend counts as in flight until they close. */
  switched(backend: Backend, head: ExchangeHead, socket: Socket, rest: Buffer): void {
    const { balancer, metrics } = this.deps;
    this.route.observation.bytesCounted = false;
    this.route.logEnd?.();
    metrics.upgradedConnections++;
    // Power-of-two-choices then spreads long-lived connections by how many each backend holds.
    balancer.acquire(backend.address);
    this.client.switched?.(head, this.route, socket, rest, () => {
      metrics.upgradedConnections--;
      balancer.release(backend.address);
    });
  }

  #next(): void {
    const backend = this.#loop.next();
    if (!backend) {
      this.#end.fail(this.#loop.failure().error);
      return;
    }
    try {
      this.#attempt(backend);
    } catch (error) {
      this.#loop.release(backend);
      this.client.failed(error);
    }
  }

  #remaining(): number {
    return this.deadline === undefined ? Number.POSITIVE_INFINITY : this.deadline - Date.now();
  }

  #attempt(backend: Backend): void {
    const remaining = this.#remaining();
    const refused = refusedAttempt(this.clientGone, remaining);
    if (refused) {
      this.settled(backend, refused);
      return;
    }
    const dispatcher = this.#dispatchers.for(backend, this.client.upgrade);
    if (!dispatcher) {
      this.settled(backend, NOT_CARRIED);
      return;
    }
    const attempt = new Attempt(this, backend);
    this.current = attempt;
    // With a body, this bounds the wait for a connection (a full pool queues) until the client starts the
    // body; then the body's own timers take over (request-body.ts), and bodySent arms it again.
    attempt.armTimer(remaining);
    const { body, client } = this;
    const content = this.#content;
    const request = {
      method: client.method,
      path: this.route.path,
      headers: this.#headers,
      body: body ? body.forAttempt(attempt) : null,
      contentLength: content?.length,
      transferCodings: content?.transferCodings,
      upgrade: client.upgrade,
    };
    dispatcher.dispatch(backend, request, attempt);
  }
}

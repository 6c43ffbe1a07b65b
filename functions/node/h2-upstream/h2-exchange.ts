import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { NativeRoute } from "../../app/native-proxy.js";
import { upstreamRequestHeaderList } from "../../core/headers.js";
import type { AttemptResult, PolicyDeps, ProxyResult } from "../../core/proxy-policy.js";
import { RetryLoop } from "../../core/retry-loop.js";
import type { Backend } from "../../core/selection.js";
import { refusedAttempt } from "../attempt-bounds.js";
import type { ExchangeEnd, NodeProxyTransport } from "../proxy.js";
import { RequestBody } from "../request-body.js";
import { H2Attempt, type H2AttemptOwner } from "./h2-attempt.js";

/** Whether a selection goes to h2c backends: an HTTP/2 client's request to them takes the native path. */
export function selectsH2c(route: NativeRoute): boolean {
  for (const tier of route.selection.tiers) {
    for (const backend of tier.backends) if (backend.protocol === "h2c") return true;
  }
  return false;
}

/**
 * Proxies an HTTP/2 client's request on Node's objects: the client's stream to the backend's (h2c-request.ts)
 * and back, trailers included, with the same retry loop and timers as the HTTP/1.1 path (proxy.ts). Resolves
 * with the status sent, or with the error for the caller to answer (nothing was written then).
 */
export function proxyH2OnNode(
  transport: NodeProxyTransport,
  incoming: Http2ServerRequest,
  outgoing: Http2ServerResponse,
  route: NativeRoute,
  deps: PolicyDeps,
): Promise<ProxyResult<number>> {
  return new Promise((ended, failed) => {
    new H2Exchange(transport, incoming, outgoing, route, deps, { ended, failed }).run();
  });
}

class H2Exchange implements H2AttemptOwner {
  readonly transport: NodeProxyTransport;
  readonly outgoing: Http2ServerResponse;
  readonly route: NativeRoute;
  readonly deps: PolicyDeps;
  readonly method: string;
  readonly headers: string[];
  readonly body: RequestBody | undefined;
  readonly contentLength: number | undefined;
  deadline: number | undefined;
  current: H2Attempt | undefined;
  clientGone = false;
  readonly #loop: RetryLoop;
  readonly #end: ExchangeEnd;

  constructor(
    transport: NodeProxyTransport,
    incoming: Http2ServerRequest,
    outgoing: Http2ServerResponse,
    route: NativeRoute,
    deps: PolicyDeps,
    end: ExchangeEnd,
  ) {
    this.transport = transport;
    this.outgoing = outgoing;
    this.route = route;
    this.deps = deps;
    this.method = incoming.method;
    this.headers = upstreamRequestHeaderList(incoming.rawHeaders, route.forwarding);
    // RFC 9113 §8.1: a request has content unless its HEADERS ended the stream.
    const hasBody = !incoming.stream.endAfterHeaders;
    const length = incoming.headers["content-length"];
    this.contentLength =
      hasBody && length !== undefined && /^\d{1,15}$/.test(length) ? Number(length) : undefined;
    // RequestBody reads the events and flow control an Http2ServerRequest shares with IncomingMessage.
    this.body = hasBody ? new RequestBody(incoming as unknown as IncomingMessage, deps.settings) : undefined;
    this.deadline = this.body ? undefined : Date.now() + deps.settings.totalTimeoutMs;
    this.#loop = new RetryLoop(route.selection, this.method, deps, route.observation);
    this.#end = end;
  }

  run(): void {
    // The client's stream closing before the answer ended (RST_STREAM, a cancelled call, a lost
    // connection) cancels the backend's stream too.
    this.outgoing.once("close", () => this.#onClose());
    this.#next();
  }

  canResend(): boolean {
    return this.body === undefined || !this.body.consumed;
  }

  clientLeft(): void {
    this.clientGone = true;
  }

  settled(backend: Backend, result: AttemptResult<number>): void {
    if (this.#loop.settle(backend, result, this)) {
      queueMicrotask(() => this.#next());
      return;
    }
    if (!result.ok) {
      this.#end.ended(this.#loop.failure());
      return;
    }
    // Told once the stream closed, not when the head went out: @hono/node-server destroys an HTTP/2 request
    // whose body has not ended once its handler returned, which would cut a call that streams both ways
    // (bidi gRPC) at its first answer.
    const outgoing = this.outgoing;
    if (outgoing.stream.closed || outgoing.stream.destroyed) this.#end.ended(result);
    else outgoing.once("close", () => this.#end.ended(result));
  }

  bodySent(attempt: H2Attempt): void {
    this.deadline ??= Date.now() + this.deps.settings.totalTimeoutMs;
    attempt.armTimer(this.deadline - Date.now());
  }

  #onClose(): void {
    // The request's bytes are not counted on the stream-to-stream path (h2c backends): 0.
    this.route.observation.finished(this.deps.metrics, performance.now(), 0);
    this.route.logEnd?.();
    // After a whole answer this cuts nothing: the attempt is done.
    this.clientGone = true;
    this.current?.cut("client-gone");
  }

  #next(): void {
    const backend = this.#loop.next();
    if (!backend) {
      this.#end.ended(this.#loop.failure());
      return;
    }
    try {
      this.#attempt(backend);
    } catch (error) {
      this.#loop.release(backend);
      this.#end.failed(error);
    }
  }

  #attempt(backend: Backend): void {
    const remaining = this.deadline === undefined ? Number.POSITIVE_INFINITY : this.deadline - Date.now();
    const refused = refusedAttempt(this.clientGone, remaining);
    if (refused) {
      this.settled(backend, refused);
      return;
    }
    const attempt = new H2Attempt(this, backend);
    this.current = attempt;
    attempt.armTimer(remaining);
    this.transport.poolFor(backend).dispatch(
      {
        method: this.method,
        path: this.route.path,
        headers: this.headers,
        body: this.body ? this.body.forAttempt(attempt) : null,
        contentLength: this.contentLength,
        transferCodings: undefined,
      },
      attempt,
    );
  }
}

import { type IncomingMessage, ServerResponse } from "node:http";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Dispatcher, Pool } from "undici";
import type { NativeProxy, NativeRoute } from "../app/app.js";
import {
  downstreamResponseHeaderList,
  hasBody,
  reasonPhrase,
  upstreamRequestHeaderList,
} from "../core/headers.js";
import {
  type AbortCause,
  type AttemptResult,
  type Attempts,
  noteAnswer,
  type PolicyDeps,
  type ProxyResult,
  withRetries,
} from "../core/proxy-policy.js";
import { REQUEST_ID_HEADER } from "../core/request-id.js";
import type { Backend } from "../core/select.js";
import { failedAttempt } from "../transports/connect-errors.js";
import type { UpstreamTarget } from "../transports/upstream.js";
import { armAttemptTimer, refusedAttempt } from "./attempt-bounds.js";
import { type BodyAttempt, RequestBody } from "./request-body.js";

/**
 * The Node-native proxy: the same routing, header rules and policy (core/proxy-policy.ts) as the web
 * path, but on Node's own objects, because building web Request/Response/Headers, AbortControllers and web
 * streams per request cost most of the router's CPU (bench: ~25% of a profile, 4x the CPU of a minimal
 * proxy). Upstream headers are a flat list built from `rawHeaders`, the client's IncomingMessage streams to
 * the backend's undici Pool through a dispatch handler that writes the response head with writeHead and
 * each chunk with write (backpressure by pausing undici; no stream.pipeline, which halves throughput,
 * DESIGN.md "Router function"), and one timer per attempt bounds both timeouts (attempt-bounds.ts).
 */
export interface NodeProxyTransport {
  poolFor(target: UpstreamTarget): Pool;
}

export function createNodeProxy(transport: NodeProxyTransport): NativeProxy {
  // @hono/node-server turns a Response into its own lightweight one when the global Response was already
  // replaced at import; reading `body` makes it a native Response again, which the adapter's
  // "already sent" check needs (a lightweight one would be written a second time).
  void RESPONSE_ALREADY_SENT.body;
  return {
    alreadySent: RESPONSE_ALREADY_SENT,
    forward(env, route, deps) {
      const bindings = env as Partial<HttpBindings> | undefined;
      const incoming = bindings?.incoming;
      const outgoing = bindings?.outgoing;
      // HTTP/2 responses are not ServerResponse; HEAD responses are rewrapped by Hono (app.fetch), so the
      // adapter would write them a second time: both take the web path.
      if (!incoming || !(outgoing instanceof ServerResponse) || incoming.method === "HEAD") return undefined;
      return proxyOnNode(transport, incoming, outgoing, route, deps);
    },
  };
}

/**
 * Proxies one routed request on Node's objects; resolves with the status sent, or with the error for the
 * caller to answer (nothing was written then). Never for HEAD: Node's HEAD answers take the web path.
 */
export function proxyOnNode(
  transport: NodeProxyTransport,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  route: NativeRoute,
  deps: PolicyDeps,
): Promise<ProxyResult<number>> {
  return new Exchange(transport, incoming, outgoing, route, deps).run();
}

/**
 * How much of a response may wait in the client's socket before undici stops reading from the backend: about
 * what a piped undici body holds (its stream's 64 KiB, the socket's 16 KiB, and the chunk in hand). Pausing
 * at the socket's 16 KiB instead stopped and restarted the backend's parser for every 64 KiB body
 * (bench/proxy: ~25% more CPU per request).
 */
const RESPONSE_BUFFER_BYTES = 128 * 1024;

/** The Exchange a response belongs to, so one shared 'close' listener serves every request (no closure each). */
const EXCHANGE = Symbol("edgeslice.exchange");
type ExchangeResponse = ServerResponse & { [EXCHANGE]?: Exchange };

function onResponseClose(this: ExchangeResponse): void {
  this[EXCHANGE]?.onClose();
}

function endResponse(this: ServerResponse): void {
  this.end();
}

/** One proxied request: its attempts, its timer, and the client connection's close. */
class Exchange implements Attempts<number> {
  readonly transport: NodeProxyTransport;
  readonly outgoing: ServerResponse;
  readonly route: NativeRoute;
  readonly deps: PolicyDeps;
  readonly method: string;
  readonly headers: string[];
  readonly body: RequestBody | undefined;
  /**
   * When the request must have its response head, across attempts. Envoy's model: the clock starts once the
   * whole request was sent upstream, so with a body it is set when the body went (a client slow to upload
   * is bounded by its own idle timeout, not charged to the backend); without one, at once.
   */
  deadline: number | undefined;
  current: UpstreamAttempt | undefined;
  clientGone = false;

  constructor(
    transport: NodeProxyTransport,
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    route: NativeRoute,
    deps: PolicyDeps,
  ) {
    this.transport = transport;
    this.outgoing = outgoing;
    this.route = route;
    this.deps = deps;
    this.method = incoming.method ?? "GET";
    this.headers = upstreamRequestHeaderList(incoming.rawHeaders, route.forwarding);
    this.body = hasBody(incoming.rawHeaders) ? new RequestBody(incoming, deps.settings) : undefined;
    this.deadline = this.body ? undefined : Date.now() + deps.settings.totalTimeoutMs;
  }

  run(): Promise<ProxyResult<number>> {
    (this.outgoing as ExchangeResponse)[EXCHANGE] = this;
    this.outgoing.on("close", onResponseClose);
    return withRetries(this.route.selection, this, this.deps, this.route.observation);
  }

  canResend(): boolean {
    return this.body === undefined || !this.body.consumed;
  }

  /** The client went away (or the response ended): cut what is still running upstream. */
  onClose(): void {
    this.route.logEnd?.();
    if (this.outgoing.writableFinished) return;
    this.clientGone = true;
    this.current?.cut("client-gone");
  }

  attempt(backend: Backend): Promise<AttemptResult<number>> {
    const remaining = this.deadline === undefined ? Number.POSITIVE_INFINITY : this.deadline - Date.now();
    const refused = refusedAttempt(this.clientGone, remaining);
    if (refused) return Promise.resolve(refused);
    return new Promise((resolve) => {
      const attempt = new UpstreamAttempt(this, backend, resolve);
      this.current = attempt;
      // With a body, this bounds the wait for a connection (a full pool queues) until undici asks for the
      // body; then the body's own timers take over (request-body.ts), and bodySent arms it again.
      attempt.armTimer(remaining);
      this.transport.poolFor(backend).dispatch(
        {
          method: this.method as Dispatcher.HttpMethod,
          path: this.route.path,
          headers: this.headers,
          body: this.body ? this.body.forAttempt(attempt) : null,
        },
        attempt,
      );
    });
  }

  /** The whole body went to `attempt`'s backend: from now on, waiting is the backend's time. */
  bodySent(attempt: UpstreamAttempt): void {
    this.deadline ??= Date.now() + this.deps.settings.totalTimeoutMs;
    attempt.armTimer(this.deadline - Date.now());
  }
}

/**
 * One attempt as an undici dispatch handler, in the form undici drives its own handlers with (raw header
 * buffers, a boolean for backpressure): the form with a controller costs a wrapper per request and a header
 * object parsed from the raw fields (and another for the trailers). The response head is written with one
 * writeHead of a flat field list (Node builds the head string once, sent with the first chunk in one writev),
 * each chunk straight to the client's response, and undici is paused while the client's socket is full. No
 * Readable, no pipe, no promise per chunk (Pool.request wraps the same handler in a Readable and an
 * AsyncResource).
 */
class UpstreamAttempt implements Dispatcher.DispatchHandler, BodyAttempt {
  readonly #exchange: Exchange;
  readonly #backend: Backend;
  #resolve: ((result: AttemptResult<number>) => void) | undefined;
  #abort: ((error?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #cause: AbortCause | undefined;
  #answered = false;
  #done = false;
  timer: NodeJS.Timeout | undefined;

  constructor(exchange: Exchange, backend: Backend, resolve: (result: AttemptResult<number>) => void) {
    this.#exchange = exchange;
    this.#backend = backend;
    this.#resolve = resolve;
  }

  /** Bounds the wait for the response head: the per-try timeout or `remainingMs`, whichever ends first. */
  armTimer(remainingMs: number): void {
    if (this.#resolve === undefined) return;
    clearTimeout(this.timer);
    this.timer = armAttemptTimer(this, remainingMs, this.#exchange.deps.settings.tryTimeoutMs);
  }

  /** The router ends this attempt: a timeout, or the client went away or stalled. */
  cut(cause: AbortCause): void {
    if (this.#cause !== undefined || this.#done) return;
    // Once the head went out, only the client leaving ends the exchange: the body may go on streaming both
    // ways, and the request body's timers (request-body.ts) bound nothing any more.
    if (this.#answered && cause !== "client-gone") return;
    this.#cause = cause;
    const error = new Error(`upstream attempt cut: ${cause}`);
    if (!this.#answered) this.#settle(failedAttempt(this.#backend, cause, error, this.#exchange.deps));
    this.#abort?.(error);
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    if (this.#cause !== undefined) abort(new Error(`upstream attempt cut: ${this.#cause}`));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) return true;
    const exchange = this.#exchange;
    if (this.#resolve === undefined || exchange.clientGone) {
      this.#abort?.(new Error("upstream response no longer wanted"));
      return false;
    }
    this.#resume = resume;
    // Names as undici's own header object has them (lowercase), values byte for byte (Latin-1).
    const fields: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
      fields.push(
        (rawHeaders[i] as Buffer).toString("latin1").toLowerCase(),
        (rawHeaders[i + 1] as Buffer).toString("latin1"),
      );
    }
    const route = exchange.route;
    const head = downstreamResponseHeaderList(fields, route.responseHeaders, [
      REQUEST_ID_HEADER,
      route.observation.requestId,
    ]);
    // The backend's reason phrase when a client may be sent it; Node's default for the status otherwise.
    const reason = reasonPhrase(statusText);
    try {
      if (reason) exchange.outgoing.writeHead(statusCode, reason, head);
      else exchange.outgoing.writeHead(statusCode, head);
    } catch (error) {
      // A head Node refuses to write: the backend's answer cannot be relayed (502), and the attempt settles
      // like any other, so nothing stays counted in flight.
      this.#done = true;
      this.#settle(failedAttempt(this.#backend, undefined, error, exchange.deps));
      this.#abort?.(error as Error);
      return false;
    }
    this.#answered = true;
    noteAnswer(this.#backend, statusCode, exchange.deps);
    route.observation.respond(exchange.deps.metrics, statusCode, performance.now(), true);
    this.#settle({ ok: true, value: statusCode });
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#exchange.route.observation.bytes += chunk.length;
    const outgoing = this.#exchange.outgoing;
    if (outgoing.write(chunk) || outgoing.writableLength <= RESPONSE_BUFFER_BYTES) return true;
    // Paused until the client's socket drains: undici reads nothing more from the backend meanwhile. Past
    // RESPONSE_BUFFER_BYTES the last write returned false, so a 'drain' is due.
    outgoing.once("drain", () => this.#resume?.());
    return false;
  }

  onComplete(): void {
    this.#done = true;
    const outgoing = this.#exchange.outgoing;
    // While the client's socket is full, end() would queue one more (empty) write behind the body: ending once
    // it drained sends the body's tail alone, as a piped stream does (its end waits for the drain too).
    if (outgoing.writableNeedDrain) outgoing.once("drain", endResponse);
    else outgoing.end();
  }

  onError(error: Error): void {
    this.#done = true;
    if (this.#answered) {
      // The head went out: a backend failing mid-body ends the client's response abruptly (never a clean
      // end that would pass a truncated body for a whole one).
      this.#exchange.outgoing.destroy(error);
      return;
    }
    if (this.#cause !== undefined) return;
    this.#settle(failedAttempt(this.#backend, undefined, error, this.#exchange.deps));
  }

  bodyStarted(): void {
    clearTimeout(this.timer);
  }

  bodySent(): void {
    this.#exchange.bodySent(this);
  }

  clientLeft(): void {
    this.#exchange.clientGone = true;
    this.cut("client-gone");
  }

  #settle(result: AttemptResult<number>): void {
    clearTimeout(this.timer);
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.(result);
  }
}

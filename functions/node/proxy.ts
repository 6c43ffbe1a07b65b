import { type IncomingMessage, ServerResponse } from "node:http";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { ExchangeDispatcher } from "../../lib/http1/exchange-handler.js";
import { type RequestContent, requestContentOf } from "../../lib/http1/request-content.js";
import type { NativeProxy, NativeRoute } from "../app/native-proxy.js";
import { upstreamRequestHeaderList } from "../core/headers.js";
import type { AttemptResult, PolicyDeps, ProxyResult } from "../core/proxy-policy.js";
import { RetryLoop } from "../core/retry-loop.js";
import type { Backend } from "../core/selection.js";
import type { UpstreamTarget } from "../transports/upstream.js";
import { refusedAttempt } from "./attempt-bounds.js";
import { type AttemptOwner, BackendAttempt } from "./backend-attempt.js";
import { answeredWhole, type ClientResponse } from "./client-response.js";
import { RequestBody } from "./request-body.js";

/**
 * The Node-native proxy: the same routing, header rules and policy (core/proxy-policy.ts) as the web
 * path, but on Node's own objects, because web Request/Response/Headers, AbortControllers and web streams
 * per request would cost more than the proxying itself. Upstream headers are a flat list built from
 * `rawHeaders`, the client's IncomingMessage streams to the backend's pool (backend-pools.ts) through a handler
 * (backend-attempt.ts) that writes the response head with writeHead and each chunk with write (back-pressure by
 * pausing the backend's socket, no stream.pipeline: docs/design.md, Router 3), and one timer per attempt bounds
 * both timeouts (attempt-bounds.ts).
 */
export interface NodeProxyTransport {
  poolFor(target: UpstreamTarget): ExchangeDispatcher;
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
      // HTTP/2 responses are not ServerResponse (http2/h2-to-h1-exchange.ts takes them); HEAD responses are
      // rewrapped by Hono (app.fetch), so the adapter would write them a second time: they take the web path.
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
  return new Promise((ended, failed) => {
    new Exchange(transport, incoming, outgoing, route, deps, { ended, failed }).run();
  });
}

/** What an exchange sends upstream for its client's request, read once from the request's head. */
export interface UpstreamRequest {
  readonly method: string;
  readonly headers: string[];
  /** How the request's content is framed (undefined: it has none), sent on as it came. */
  readonly content: RequestContent | undefined;
  /** The request's framing cannot be read reliably (RFC 9112 §6.3): it is refused before any attempt. */
  readonly framingRefused: boolean;
  /** A response to the client may carry transfer codings: HTTP/1.1 or later on HTTP/1 (RFC 9112 §6.1). */
  readonly clientSpeaks11: boolean;
}

/** An HTTP/1.x client's request, from Node's `rawHeaders`. */
export function upstreamRequestOf(incoming: IncomingMessage, route: NativeRoute): UpstreamRequest {
  let content: RequestContent | undefined;
  let framingRefused = false;
  try {
    content = requestContentOf(incoming.rawHeaders);
  } catch {
    // Node's parser refuses such heads before they get here; the proxy would not guess either.
    framingRefused = true;
  }
  return {
    method: incoming.method ?? "GET",
    headers: upstreamRequestHeaderList(incoming.rawHeaders, route.forwarding),
    content,
    framingRefused,
    clientSpeaks11: incoming.httpVersionMajor > 1 || incoming.httpVersionMinor >= 1,
  };
}

/** Who hears how an exchange ended: proxyOnNode's promise, or the Node listener's request itself. */
export interface ExchangeEnd {
  /** The status sent, or the error to answer (nothing was written then); once. */
  ended(result: ProxyResult<number>): void;
  /** An exception on the way (the request's own answer is the caller's). */
  failed(error: unknown): void;
}

const FRAMING_REFUSED: ProxyResult<number> = { ok: false, error: "bad_request" };

/** The Exchange a response belongs to, so one shared 'close' listener serves every request (no closure each). */
const EXCHANGE = Symbol("edgeslice.exchange");
type ExchangeResponse = ClientResponse & { [EXCHANGE]?: Exchange };

function onResponseClose(this: ExchangeResponse): void {
  this[EXCHANGE]?.onClose();
}

/**
 * One proxied request: its attempts (core/retry-loop.ts, driven from the client's callbacks rather than a promise
 * per attempt), its timer, and the client connection's close.
 */
export class Exchange implements AttemptOwner {
  readonly transport: NodeProxyTransport;
  readonly outgoing: ClientResponse;
  readonly route: NativeRoute;
  readonly deps: PolicyDeps;
  readonly method: string;
  readonly headers: string[];
  /** How the request's content is framed (undefined: it has none), sent on as it came. */
  readonly content: RequestContent | undefined;
  readonly body: RequestBody | undefined;
  readonly clientSpeaks11: boolean;
  /**
   * When the request must have its response head, across attempts. Envoy's model: the clock starts once the
   * whole request was sent upstream, so with a body it is set when the body went (a client slow to upload
   * is bounded by its own idle timeout, not charged to the backend); without one, at once.
   */
  deadline: number | undefined;
  current: BackendAttempt | undefined;
  clientGone = false;
  /** The request's framing cannot be read reliably (RFC 9112 §6.3): it is refused before any attempt. */
  readonly #framingRefused: boolean;
  readonly #loop: RetryLoop;
  readonly #end: ExchangeEnd;

  constructor(
    transport: NodeProxyTransport,
    incoming: IncomingMessage,
    outgoing: ClientResponse,
    route: NativeRoute,
    deps: PolicyDeps,
    end: ExchangeEnd,
    request: UpstreamRequest = upstreamRequestOf(incoming, route),
  ) {
    this.transport = transport;
    this.outgoing = outgoing;
    this.route = route;
    this.deps = deps;
    this.method = request.method;
    this.headers = request.headers;
    const content = request.content;
    this.#framingRefused = request.framingRefused;
    this.content = content;
    this.body = content && content.length !== 0 ? new RequestBody(incoming, deps.settings) : undefined;
    this.clientSpeaks11 = request.clientSpeaks11;
    this.deadline = this.body ? undefined : Date.now() + deps.settings.totalTimeoutMs;
    this.#loop = new RetryLoop(route.selection, this.method, deps, route.observation);
    this.#end = end;
  }

  /** Starts the first attempt; the end is told the status sent, or the error once no attempt produced a response. */
  run(): void {
    if (this.#framingRefused) {
      this.#end.ended(FRAMING_REFUSED);
      return;
    }
    (this.outgoing as ExchangeResponse)[EXCHANGE] = this;
    this.outgoing.on("close", onResponseClose);
    this.#next();
  }

  canResend(): boolean {
    return this.body === undefined || !this.body.consumed;
  }

  /** The client went away (or the response ended): cut what is still running upstream. */
  onClose(): void {
    this.route.observation.finished(this.deps.metrics, performance.now(), this.body?.received ?? 0);
    this.route.logEnd?.();
    if (answeredWhole(this.outgoing)) return;
    this.clientGone = true;
    this.current?.cut("client-gone");
  }

  clientLeft(): void {
    this.clientGone = true;
  }

  /** An attempt's outcome (once per attempt): the exchange ends, or the next attempt goes. */
  settled(backend: Backend, result: AttemptResult<number>): void {
    if (this.#loop.settle(backend, result, this)) {
      // Never inside the failed attempt's own callback: the next one starts on a clean stack.
      queueMicrotask(() => this.#next());
      return;
    }
    this.#end.ended(result.ok ? result : this.#loop.failure());
  }

  /** The whole body went to `attempt`'s backend: from now on, waiting is the backend's time. */
  bodySent(attempt: BackendAttempt): void {
    this.deadline ??= Date.now() + this.deps.settings.totalTimeoutMs;
    attempt.armTimer(this.deadline - Date.now());
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
    const attempt = new BackendAttempt(this, backend);
    this.current = attempt;
    // With a body, this bounds the wait for a connection (a full pool queues) until the client starts the
    // body; then the body's own timers take over (request-body.ts), and bodySent arms it again.
    attempt.armTimer(remaining);
    const body = this.body;
    this.transport.poolFor(backend).dispatch(
      {
        method: this.method,
        path: this.route.path,
        headers: this.headers,
        body: body ? body.forAttempt(attempt) : null,
        replayBody: body ? () => body.replay(attempt) : undefined,
        contentLength: this.content?.length,
        transferCodings: this.content?.transferCodings,
      },
      attempt,
    );
  }
}

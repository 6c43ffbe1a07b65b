import { EventEmitter } from "node:events";
import { type IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Dispatcher, Pool } from "undici";
import type { NativeProxy, NativeRoute } from "./app.js";
import { downstreamResponseHeaderObject, upstreamRequestHeaderList } from "./headers.js";
import {
  type AbortCause,
  type AttemptResult,
  type Attempts,
  abortedBeforeAttempt,
  noteAnswer,
  noteAttemptFailure,
  type PolicyDeps,
  type ProxyResult,
  withRetries,
} from "./proxy-policy.js";
import type { Backend } from "./select.js";
import { isConnectPhaseError } from "./undici-upstream.js";
import type { UpstreamTarget } from "./upstream.js";

/**
 * The Node-native proxy: the same routing, header rules and policy (proxy-policy.ts) as the web path, but
 * on Node's own objects, because building web Request/Response/Headers, AbortControllers and web streams
 * per request cost most of the router's CPU (bench: ~25% of a profile, 4x the CPU of a minimal proxy).
 * Upstream headers are a flat list built from `rawHeaders`, the client's IncomingMessage streams to
 * undici's Pool.request, the response is written with writeHead and piped (not stream.pipeline, which
 * halves throughput, DESIGN.md "Router function"), one timer per attempt bounds both timeouts, and a
 * small EventEmitter (which undici accepts as a signal) replaces AbortControllers.
 */
export interface NodeProxyTransport {
  poolFor(target: UpstreamTarget): Pool;
}

/** RFC 9110 §15: these statuses never carry content. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

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
      return new Exchange(transport, incoming, outgoing, route, deps).run();
    },
  };
}

/** What undici needs of a signal: `aborted`, `reason`, and an `abort` event. */
class AttemptSignal extends EventEmitter {
  aborted = false;
  reason: Error | undefined;
  cause: AbortCause | undefined;

  abort(cause: AbortCause): void {
    if (this.aborted) return;
    this.aborted = true;
    this.cause = cause;
    this.reason = new Error(`upstream attempt cut: ${cause}`);
    this.emit("abort");
  }
}

/** One proxied request: its attempts, its timer, and the client connection's close. */
class Exchange implements Attempts<number> {
  readonly #transport: NodeProxyTransport;
  readonly #outgoing: ServerResponse;
  readonly #route: NativeRoute;
  readonly #deps: PolicyDeps;
  readonly method: string;
  readonly #headers: string[];
  readonly #body: RequestBody | undefined;
  readonly #deadline: number;
  #signal: AttemptSignal | undefined;
  #upstreamBody: Dispatcher.ResponseData["body"] | undefined;
  #clientGone = false;

  constructor(
    transport: NodeProxyTransport,
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    route: NativeRoute,
    deps: PolicyDeps,
  ) {
    this.#transport = transport;
    this.#outgoing = outgoing;
    this.#route = route;
    this.#deps = deps;
    this.method = incoming.method ?? "GET";
    this.#headers = upstreamRequestHeaderList(incoming.rawHeaders, route.forwarding);
    this.#body = hasBody(incoming.rawHeaders) ? new RequestBody(incoming) : undefined;
    this.#deadline = Date.now() + deps.settings.totalTimeoutMs;
  }

  run(): Promise<ProxyResult<number>> {
    this.#outgoing.once("close", this.onClose.bind(this));
    return withRetries(this.#route.selection, this, this.#deps);
  }

  canResend(): boolean {
    return this.#body === undefined || !this.#body.consumed;
  }

  /** The client went away (or the response ended): cut what is still running upstream. */
  onClose(): void {
    if (this.#outgoing.writableFinished) return;
    this.#clientGone = true;
    this.#signal?.abort("client-gone");
    this.#upstreamBody?.destroy();
  }

  async attempt(backend: Backend): Promise<AttemptResult<number>> {
    if (this.#clientGone) return abortedBeforeAttempt("client-gone");
    const remaining = this.#deadline - Date.now();
    if (remaining <= 0) return abortedBeforeAttempt("total-timeout");
    const { tryTimeoutMs } = this.#deps.settings;
    const signal = new AttemptSignal();
    this.#signal = signal;
    // One timer per attempt covers both limits: whichever ends first.
    const timer =
      remaining <= tryTimeoutMs
        ? setTimeout(cut, remaining, signal, "total-timeout")
        : setTimeout(cut, tryTimeoutMs, signal, "try-timeout");
    let data: Dispatcher.ResponseData;
    try {
      data = await this.#transport.poolFor(backend).request({
        method: this.method as Dispatcher.HttpMethod,
        path: this.#route.path,
        headers: this.#headers,
        body: this.#body ? this.#body.forAttempt() : null,
        signal,
      });
    } catch (error) {
      const cause = signal.cause;
      return noteAttemptFailure(
        backend,
        cause,
        cause === undefined && isConnectPhaseError(error),
        error,
        this.#deps,
      );
    } finally {
      clearTimeout(timer);
      this.#signal = undefined;
    }
    noteAnswer(backend, data.statusCode, this.#deps);
    this.#respond(data);
    return { ok: true, value: data.statusCode };
  }

  #respond(data: Dispatcher.ResponseData): void {
    const outgoing = this.#outgoing;
    const body = data.body;
    if (this.#clientGone) {
      body.destroy();
      return;
    }
    outgoing.writeHead(data.statusCode, data.statusText, downstreamResponseHeaderObject(data.headers));
    if (NULL_BODY_STATUSES.has(data.statusCode)) {
      body.dump().catch(() => undefined);
      outgoing.end();
      return;
    }
    this.#upstreamBody = body;
    // pipe() does not forward errors: a backend that fails mid-body ends the client's response abruptly
    // (no clean end that would pass a truncated body for a whole one).
    body.once("error", (error) => outgoing.destroy(error));
    body.pipe(outgoing);
  }
}

function cut(signal: AttemptSignal, cause: AbortCause): void {
  signal.abort(cause);
}

/** RFC 9112 §6.3: a request has content only with a non-zero Content-Length or a Transfer-Encoding. */
function hasBody(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name === undefined) continue;
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") return true;
    if (name.length === 14 && name.toLowerCase() === "content-length" && rawHeaders[i + 1]?.trim() !== "0") {
      return true;
    }
  }
  return false;
}

/**
 * The client's body, streamed to one attempt at a time. Nothing is read from the client before undici asks
 * (after it connected), and a failed attempt never destroys the client's stream: a body still unread can
 * go whole to the next backend; once read, it cannot be sent again.
 */
class RequestBody {
  consumed = false;
  readonly #incoming: IncomingMessage;

  constructor(incoming: IncomingMessage) {
    this.#incoming = incoming;
  }

  forAttempt(): Readable {
    const incoming = this.#incoming;
    let attached = false;
    const onData = (chunk: Buffer) => {
      if (!stream.push(chunk)) incoming.pause();
    };
    const onEnd = () => stream.push(null);
    const onClose = () => {
      if (!incoming.readableEnded) stream.destroy(new Error("client went away while sending the body"));
    };
    const onError = (error: Error) => stream.destroy(error);
    const stream = new Readable({
      read: () => {
        if (!attached) {
          attached = true;
          this.consumed = true;
          incoming.on("data", onData);
          incoming.once("end", onEnd);
          incoming.once("close", onClose);
          incoming.once("error", onError);
        }
        incoming.resume();
      },
      destroy: (error, callback) => {
        if (attached) {
          incoming.off("data", onData);
          incoming.off("end", onEnd);
          incoming.off("close", onClose);
          incoming.off("error", onError);
        }
        callback(error);
      },
    });
    return stream;
  }
}

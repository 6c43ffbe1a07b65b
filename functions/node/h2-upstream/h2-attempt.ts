import {
  constants,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import type { RequestControl } from "../../../lib/http1/exchange-handler.js";
import type { ResponseHead } from "../../../lib/http1/response-head.js";
import type { NativeRoute } from "../../app/native-proxy.js";
import { downstreamResponseHeaderList } from "../../core/headers.js";
import { type AbortCause, type AttemptResult, noteAnswer, type PolicyDeps } from "../../core/proxy-policy.js";
import { REQUEST_ID_HEADER } from "../../core/request-id.js";
import type { Backend } from "../../core/selection.js";
import { failedAttempt } from "../../transports/connect-errors.js";
import { type AttemptTimer, armAttemptTimer } from "../attempt-bounds.js";
import type { BodyAttempt } from "../request-body.js";
import type { H2cExchangeHandler, H2cResponseHead } from "./h2c-request.js";

/** The HTTP/2 client's exchange (h2-exchange.ts) as its attempts see it. */
export interface H2AttemptOwner {
  readonly deps: PolicyDeps;
  readonly route: Pick<NativeRoute, "responseHeaders" | "observation">;
  readonly outgoing: Http2ServerResponse;
  readonly clientGone: boolean;
  settled(backend: Backend, result: AttemptResult<number>): void;
  bodySent(attempt: H2Attempt): void;
  clientLeft(): void;
}

/** HTTP/2 response fields from a flat list: repeated names as lists, names lower-case as HTTP/2 wants. */
function headerObject(status: number, fields: readonly string[]): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { ":status": status };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = (fields[i] as string).toLowerCase();
    const value = fields[i + 1] as string;
    const present = headers[name];
    if (present === undefined) headers[name] = value;
    else if (Array.isArray(present)) present.push(value);
    else headers[name] = [String(present), value];
  }
  return headers;
}

/** Trailer fields to relay: the backend's, without pseudo-header fields (RFC 9113 §8.1: none in trailers). */
function relayedTrailers(trailers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(trailers)) {
    const value = trailers[name];
    if (!name.startsWith(":") && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * One attempt of an HTTP/2 client's request, on an h2c backend or an HTTP/1.1 one (the same handler interface):
 * the backend's head, body and trailers go to the client's stream as they come, so gRPC's streaming calls and
 * its status trailers pass through. A Trailers-Only answer (HEADERS that end the stream) stays one. A backend
 * that fails after the head resets the client's stream (INTERNAL_ERROR; CANCEL when the router cut it), never
 * a clean end that would pass a cut call for a whole one.
 */
export class H2Attempt implements H2cExchangeHandler, BodyAttempt {
  readonly #owner: H2AttemptOwner;
  readonly #backend: Backend;
  #pending = true;
  #control: RequestControl | undefined;
  #cause: AbortCause | undefined;
  #answered = false;
  #done = false;
  timer: AttemptTimer | undefined;

  constructor(owner: H2AttemptOwner, backend: Backend) {
    this.#owner = owner;
    this.#backend = backend;
  }

  armTimer(remainingMs: number): void {
    if (!this.#pending) return;
    this.timer?.cancel();
    this.timer = armAttemptTimer(this, remainingMs, this.#owner.deps.settings.tryTimeoutMs);
  }

  cut(cause: AbortCause): void {
    if (this.#cause !== undefined || this.#done) return;
    if (this.#answered && cause !== "client-gone") return;
    this.#cause = cause;
    const error = new Error(`upstream attempt cut: ${cause}`);
    if (!this.#answered) this.#settle(failedAttempt(this.#backend, cause, error, this.#owner.deps));
    this.#control?.abort(error);
  }

  onStart(control: RequestControl): void {
    this.#control = control;
    if (this.#cause !== undefined) control.abort(new Error(`upstream attempt cut: ${this.#cause}`));
  }

  onHead(head: ResponseHead): void {
    const owner = this.#owner;
    if (!this.#pending || owner.clientGone) {
      this.#control?.abort(new Error("upstream response no longer wanted"));
      return;
    }
    const { route, outgoing } = owner;
    const fields = downstreamResponseHeaderList(head.fields, route.responseHeaders, [
      REQUEST_ID_HEADER,
      route.observation.requestId,
    ]);
    try {
      const headers = headerObject(head.status, fields);
      if ((head as Partial<H2cResponseHead>).endStream === true) {
        this.#done = true;
        outgoing.stream.respond(headers, { endStream: true });
      } else {
        delete headers[":status"];
        outgoing.writeHead(head.status, headers);
      }
    } catch (error) {
      this.#done = true;
      this.#settle(failedAttempt(this.#backend, undefined, error, owner.deps));
      this.#control?.abort(error as Error);
      return;
    }
    this.#answered = true;
    noteAnswer(this.#backend, head.status, owner.deps);
    route.observation.respond(owner.deps.metrics, head.status, performance.now(), true);
    this.#settle({ ok: true, value: head.status });
  }

  onData(chunk: Buffer): boolean {
    if (this.#done) return true;
    this.#owner.route.observation.bytes += chunk.length;
    const outgoing = this.#owner.outgoing;
    if (outgoing.write(chunk)) return true;
    outgoing.stream.once("drain", () => this.#control?.resume());
    return false;
  }

  onTrailers(trailers: IncomingHttpHeaders): void {
    if (this.#done || !this.#answered) return;
    this.#owner.outgoing.addTrailers(relayedTrailers(trailers));
  }

  onComplete(): void {
    if (this.#done) return;
    this.#done = true;
    this.#owner.outgoing.end();
  }

  onError(error: Error): void {
    const wasDone = this.#done;
    this.#done = true;
    if (this.#answered) {
      if (wasDone) return;
      const stream = this.#owner.outgoing.stream;
      const code =
        this.#cause === "client-gone" ? constants.NGHTTP2_CANCEL : constants.NGHTTP2_INTERNAL_ERROR;
      if (!stream.destroyed) stream.close(code);
      return;
    }
    if (this.#cause !== undefined) return;
    this.#settle(failedAttempt(this.#backend, undefined, error, this.#owner.deps));
  }

  bodyStarted(): void {
    this.timer?.cancel();
  }

  bodySent(): void {
    this.#owner.bodySent(this);
  }

  clientLeft(): void {
    this.#owner.clientLeft();
    this.cut("client-gone");
  }

  #settle(result: AttemptResult<number>): void {
    this.timer?.cancel();
    if (!this.#pending) return;
    this.#pending = false;
    this.#owner.settled(this.#backend, result);
  }
}

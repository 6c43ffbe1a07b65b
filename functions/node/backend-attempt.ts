import { ServerResponse } from "node:http";
import type { ExchangeHandler, RequestControl } from "../../lib/http1/exchange-handler.js";
import type { ResponseHead } from "../../lib/http1/response-head.js";
import type { NativeRoute } from "../app/native-proxy.js";
import { downstreamResponseHeaderList, reasonPhrase } from "../core/headers.js";
import { type AbortCause, type AttemptResult, noteAnswer, type PolicyDeps } from "../core/proxy-policy.js";
import { REQUEST_ID_HEADER } from "../core/request-id.js";
import type { Backend } from "../core/selection.js";
import { failedAttempt } from "../transports/connect-errors.js";
import { type AttemptTimer, armAttemptTimer } from "./attempt-bounds.js";
import { type ClientResponse, writeResponseHead } from "./client-response.js";
import { relayFraming } from "./relayed-framing.js";
import type { BodyAttempt } from "./request-body.js";

/**
 * How much of a response may wait in the client's socket before reading from the backend stops: about what a
 * piped stream holds (its 64 KiB, the socket's 16 KiB, and the chunk in hand), so a typical body is relayed
 * without stopping and restarting the backend's parser.
 */
const RESPONSE_BUFFER_BYTES = 128 * 1024;

function endResponse(this: ClientResponse): void {
  this.end();
}

/** The proxied request an attempt belongs to (proxy.ts's Exchange): what the attempt reads of it and tells it. */
export interface AttemptOwner {
  readonly deps: PolicyDeps;
  readonly route: Pick<NativeRoute, "responseHeaders" | "observation">;
  readonly outgoing: ClientResponse;
  /** The client went away: a response head that arrives now is no longer wanted. */
  readonly clientGone: boolean;
  /** The client's request said HTTP/1.1 (or later): a response to it may carry transfer codings. */
  readonly clientSpeaks11: boolean;
  /** The attempt's outcome (a response head or a failure), told once. */
  settled(backend: Backend, result: AttemptResult<number>): void;
  /** The whole request body went to `attempt`'s backend: the backend's time starts. */
  bodySent(attempt: BackendAttempt): void;
  /** The client went away or failed while sending its body. */
  clientLeft(): void;
}

/**
 * One attempt, as the handler of its request on the backend's pool (lib/http1/origin-pool.ts): the response head is written with
 * one writeHead of a flat field list (Node builds the head string once, sent with the first chunk in one
 * writev), each chunk straight to the client's response, and reading from the backend is paused while the
 * client's socket is full. No Readable, no pipe, no promise per chunk.
 */
export class BackendAttempt implements ExchangeHandler, BodyAttempt {
  readonly #exchange: AttemptOwner;
  readonly #backend: Backend;
  /** Until the attempt has its outcome (a response head or a failure), told to the exchange once. */
  #pending = true;
  #control: RequestControl | undefined;
  #cause: AbortCause | undefined;
  #answered = false;
  #done = false;
  /** The client's socket still held bytes when the last read was handed on: chunks go as copies meanwhile. */
  #backlogged = false;
  /** A chunk of the read under way went to the client's socket as it came (a view of the read's buffer). */
  #sentAsRead = false;
  timer: AttemptTimer | undefined;

  constructor(exchange: AttemptOwner, backend: Backend) {
    this.#exchange = exchange;
    this.#backend = backend;
  }

  /** Bounds the wait for the response head: the per-try timeout or `remainingMs`, whichever ends first. */
  armTimer(remainingMs: number): void {
    if (!this.#pending) return;
    this.timer?.cancel();
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
    this.#control?.abort(error);
  }

  onStart(control: RequestControl): void {
    this.#control = control;
    if (this.#cause !== undefined) control.abort(new Error(`upstream attempt cut: ${this.#cause}`));
  }

  onHead(response: ResponseHead): void {
    const exchange = this.#exchange;
    if (!this.#pending || exchange.clientGone) {
      this.#control?.abort(new Error("upstream response no longer wanted"));
      return;
    }
    const route = exchange.route;
    const statusCode = response.status;
    const head = downstreamResponseHeaderList(response.fields, route.responseHeaders, [
      REQUEST_ID_HEADER,
      route.observation.requestId,
    ]);
    // The backend's reason phrase when a client may be sent it; Node's default for the status otherwise.
    const reason = reasonPhrase(response.reason);
    try {
      const unrelayable = relayFraming(response, head, exchange.clientSpeaks11);
      if (unrelayable) throw unrelayable;
      writeResponseHead(exchange.outgoing, statusCode, reason, head);
    } catch (error) {
      // A head that cannot be relayed as it came, or that Node refuses to write: the backend's answer cannot be
      // passed on (502), and the attempt settles like any other, so nothing stays counted in flight.
      this.#done = true;
      this.#settle(failedAttempt(this.#backend, undefined, error, exchange.deps));
      this.#control?.abort(error as Error);
      return;
    }
    this.#answered = true;
    noteAnswer(this.#backend, statusCode, exchange.deps);
    route.observation.respond(exchange.deps.metrics, statusCode, performance.now(), true);
    this.#settle({ ok: true, value: statusCode });
  }

  onData(chunk: Buffer): boolean {
    this.#exchange.route.observation.bytes += chunk.length;
    const outgoing = this.#exchange.outgoing;
    // Behind bytes the client has not taken, the chunk would wait in the socket: it goes as a copy of its own
    // size, so a trickle of small reads never holds a whole read buffer each (lib/http1/read-buffer.ts). An
    // HTTP/2 client's stream is always given copies: when its frames leave is not in sight here.
    const copy = !(outgoing instanceof ServerResponse) || (this.#backlogged && outgoing.writableLength > 0);
    if (!copy) this.#sentAsRead = true;
    const sent = outgoing.write(copy ? Buffer.from(chunk) : chunk);
    if (sent || outgoing.writableLength <= RESPONSE_BUFFER_BYTES) return true;
    // Paused until the client's socket drains: nothing more is read from the backend meanwhile. Past
    // RESPONSE_BUFFER_BYTES the last write returned false, so a 'drain' is due.
    outgoing.once("drain", () => this.#control?.resume());
    return false;
  }

  /**
   * Node corks the client's socket from a write until the end of the tick: what the read brought (the head
   * with it, the end too if it came) goes now instead, in one writev still; whatever the kernel did not take
   * stays held by the socket, chunks sent as they came among it.
   */
  holdsChunk(): boolean {
    const outgoing = this.#exchange.outgoing;
    if (!(outgoing instanceof ServerResponse)) return false;
    const socket = outgoing.socket;
    if (socket !== null && socket.writableCorked === 1) socket.uncork();
    this.#backlogged = outgoing.writableLength > 0;
    const held = this.#sentAsRead && this.#backlogged;
    this.#sentAsRead = false;
    return held;
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
    this.timer?.cancel();
  }

  bodySent(): void {
    this.#exchange.bodySent(this);
  }

  clientLeft(): void {
    this.#exchange.clientLeft();
    this.cut("client-gone");
  }

  #settle(result: AttemptResult<number>): void {
    this.timer?.cancel();
    if (!this.#pending) return;
    this.#pending = false;
    this.#exchange.settled(this.#backend, result);
  }
}

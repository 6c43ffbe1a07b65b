import type { Socket } from "node:net";
import type { ExchangeHandler, ExchangeHead, RequestControl } from "../../lib/http-exchange.js";
import type { ProxyRoute } from "../app/request-pipeline.js";
import {
  type AbortCause,
  type AttemptResult,
  noteAnswer,
  type PolicyDeps,
} from "../core/forwarding/proxy-policy.js";
import type { Backend } from "../core/selection/selection.js";
import { failedAttempt } from "../transports/connect-errors.js";
import { type AttemptTimer, armAttemptTimer } from "./attempt-bounds.js";
import type { ClientSide } from "./clients/client-side.js";
import type { BodyAttempt } from "./request-body.js";

/** The exchange an attempt belongs to (exchange.ts), as the attempt sees it. */
export interface AttemptOwner {
  readonly client: ClientSide;
  /** The client went away: an answer that arrives now is no longer wanted. */
  readonly clientGone: boolean;
  readonly route: ProxyRoute;
  readonly deps: PolicyDeps;
  /** The attempt's outcome (a response head or a failure), told once. */
  settled(backend: Backend, result: AttemptResult<number>): void;
  /** The whole request body went to `attempt`'s backend: the backend's time starts. */
  bodySent(attempt: Attempt): void;
  /** The client went away or failed while sending its body. */
  clientLeft(): void;
  /** The backend switched protocols for an upgrade: its connection is the exchange's now. */
  switched(backend: Backend, head: ExchangeHead, socket: Socket, rest: Buffer): void;
  /** True: a rule's retry drops this answer, and another attempt goes (the attempt is settled already). */
  retriesAnswer(backend: Backend, status: number): boolean;
}

/**
 * One attempt of an exchange on one backend, as the handler of its request on that backend's dispatcher: it
 * settles once (a response head relayed to the client, or a failure), then relays the body, trailers and end
 * as they come. One timer bounds the wait for the head (attempt-bounds.ts); once the head went out only the
 * client leaving ends the exchange, and a backend failing mid-body ends the client's answer abruptly.
 */
export class Attempt implements ExchangeHandler, BodyAttempt {
  readonly #exchange: AttemptOwner;
  readonly #backend: Backend;
  /** The dispatcher hands on views of a read buffer it reuses (HTTP/1.1): the client copies what it keeps. */
  readonly #views: boolean;
  /** Until the attempt has its outcome (a response head or a failure), told to the exchange once. */
  #pending = true;
  #control: RequestControl | undefined;
  #cause: AbortCause | undefined;
  #answered = false;
  #done = false;
  timer: AttemptTimer | undefined;

  constructor(exchange: AttemptOwner, backend: Backend) {
    this.#exchange = exchange;
    this.#backend = backend;
    this.#views = backend.protocol !== "h2c";
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

  onHead(head: ExchangeHead): void {
    const exchange = this.#exchange;
    if (!this.#pending || exchange.clientGone) {
      this.#control?.abort(new Error("upstream response no longer wanted"));
      return;
    }
    if (exchange.retriesAnswer(this.#backend, head.status)) {
      this.#pending = false;
      this.#done = true;
      this.timer?.cancel();
      noteAnswer(this.#backend, head.status, exchange.deps);
      this.#control?.abort(new Error("upstream answer dropped for a retry"));
      return;
    }
    try {
      exchange.client.writeHead(head, exchange.route);
    } catch (error) {
      // A head that cannot be relayed as it came, or that the client's protocol refuses: the backend's answer
      // cannot be passed on (502), and the attempt settles like any other, so nothing stays counted in flight.
      this.#done = true;
      this.#settle(failedAttempt(this.#backend, undefined, error, exchange.deps));
      this.#control?.abort(error as Error);
      return;
    }
    this.#answered = true;
    this.#responded(head.status);
    // An h2c backend's HEADERS that end its stream: no body follows, and no onComplete after this one.
    if (head.endStream === true) this.onComplete();
  }

  onUpgrade(head: ExchangeHead, socket: Socket, rest: Buffer): void {
    if (!this.#pending || this.#exchange.clientGone) {
      socket.destroy();
      return;
    }
    this.#done = true;
    this.#answered = true;
    this.#responded(101);
    this.#exchange.switched(this.#backend, head, socket, rest);
  }

  onData(chunk: Buffer): boolean {
    if (this.#done) return true;
    const exchange = this.#exchange;
    exchange.route.observation.bytes += chunk.length;
    if (exchange.client.data(chunk, this.#views)) return true;
    // Paused until the client drained: nothing more is read from the backend meanwhile.
    exchange.client.whenDrained(() => this.#control?.resume());
    return false;
  }

  holdsChunk(): boolean {
    return this.#exchange.client.holdsChunk();
  }

  onTrailers(fields: string[]): void {
    if (!this.#done && this.#answered) this.#exchange.client.trailers(fields);
  }

  onComplete(): void {
    if (this.#done) return;
    this.#done = true;
    this.#exchange.client.end();
  }

  onError(error: Error): void {
    const wasDone = this.#done;
    this.#done = true;
    if (this.#answered) {
      if (!wasDone) this.#exchange.client.abort(this.#cause === "client-gone");
      return;
    }
    // Settled already (cut, dropped for a retry, or refused): the failure that follows is no news.
    if (this.#cause !== undefined || !this.#pending) return;
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

  #responded(status: number): void {
    const { deps, route } = this.#exchange;
    noteAnswer(this.#backend, status, deps);
    route.observation.respond(deps.metrics, status, performance.now(), true);
    this.#settle({ ok: true, value: status });
  }

  #settle(result: AttemptResult<number>): void {
    this.timer?.cancel();
    if (!this.#pending) return;
    this.#pending = false;
    this.#exchange.settled(this.#backend, result);
  }
}

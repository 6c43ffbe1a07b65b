import type { BodySink, BodySource } from "../../lib/http-exchange.js";
import { MAX_REPLAYABLE_BODY_BYTES, type ProxySettings } from "../core/forwarding/proxy-policy.js";
import { AttemptTimer, type CuttableAttempt } from "./attempt-bounds.js";

/** What the body tells the attempt it streams to (attempt.ts). */
export interface BodyAttempt extends CuttableAttempt {
  /** The upstream connection is ready and asks for the body: from now on the body's timers bound the upload. */
  bodyStarted(): void;
  /** The whole body was handed to the upstream connection: the backend's time (per-try and total timeouts) starts. */
  bodySent(): void;
  /** The client went away or failed while sending its body: its doing, not the backend's. */
  clientLeft(): void;
}

type BodySettings = Pick<ProxySettings, "tryTimeoutMs" | "clientBodyIdleTimeoutMs">;

type BodyEvent = "data" | "end" | "close" | "error";
// biome-ignore lint/suspicious/noExplicitAny: Node's EventEmitter types every listener so; a narrower one is not assignable.
type EventListener = (...args: any[]) => void;

/** Where a client's body is read from: Node's IncomingMessage, or an HTTP/2 stream's (http2-front/stream-body.ts). */
export interface IncomingBody {
  on(event: BodyEvent, listener: EventListener): unknown;
  off(event: BodyEvent, listener: EventListener): unknown;
  pause(): unknown;
  resume(): unknown;
  readonly readableEnded: boolean;
}

/**
 * The client's body, streamed to one attempt at a time. Nothing is read from the client before the upstream
 * connection asks for it (once connected and the head is written), and a failed attempt never destroys the
 * client's stream. The first MAX_REPLAYABLE_BODY_BYTES read are kept (references to the chunks, no copy), so
 * a body within that bound can be sent whole again (`replay`): on a fresh connection when a kept-alive one
 * turned out closed under it, as a GET is. Past the bound it is streamed only once.
 *
 * While it streams, one timer watches whoever holds it up: the client, when the connection asked for more and
 * no bytes came for `clientBodyIdleTimeoutMs` (408, the backend not blamed); the backend, when it stopped taking
 * bytes we hold for the per-try timeout (a try timeout, as for a backend slow to answer).
 */
export class RequestBody {
  /** An attempt started reading the client's body. */
  consumed = false;
  readonly incoming: IncomingBody;
  readonly settings: BodySettings;
  /** The chunks read so far while within MAX_REPLAYABLE_BODY_BYTES; undefined once the body outgrew it. */
  kept: Buffer[] | undefined = [];
  /** The client's body ended: every byte of it was read. */
  ended = false;

  constructor(incoming: IncomingBody, settings: BodySettings) {
    this.incoming = incoming;
    this.settings = settings;
  }

  /** The body for `attempt`, from its first byte. */
  forAttempt(attempt: BodyAttempt): BodySource {
    return new AttemptBody(this, attempt);
  }

  /** Bytes of the body read from the client so far (edgeslice_request_bytes_total). */
  received = 0;

  /** A chunk read from the client: kept while the bound allows. */
  read(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received <= MAX_REPLAYABLE_BODY_BYTES) this.kept?.push(chunk);
    else this.kept = undefined;
  }
}

/**
 * One attempt's copy of the body: what was kept first, then the client's bytes as they come, read only while
 * the connection takes more.
 */
class AttemptBody implements BodySource {
  readonly #body: RequestBody;
  readonly #attempt: BodyAttempt;
  #sink: BodySink | undefined;
  /** The attempt timers' coarse deadlines (attempt-bounds.ts): a Node timer per wait cost more than the wait. */
  #timer: AttemptTimer | undefined;
  /** What an earlier attempt read, given first, and only while the sink has room (as the client's bytes are). */
  #backlog: readonly Buffer[] = [];
  #given = 0;
  #listening = false;

  constructor(body: RequestBody, attempt: BodyAttempt) {
    this.#body = body;
    this.#attempt = attempt;
  }

  start(sink: BodySink): void {
    const body = this.#body;
    this.#sink = sink;
    body.consumed = true;
    this.#attempt.bodyStarted();
    if (body.kept !== undefined && body.kept.length > 0) this.#backlog = body.kept.slice();
    this.resume();
  }

  resume(): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    const backlog = this.#backlog;
    while (this.#given < backlog.length) {
      const room = sink.bodyData(backlog[this.#given++] as Buffer);
      // The sink may have stopped the body in the call (a chunk past the declared length).
      if (this.#sink === undefined) return;
      if (!room) {
        this.#wait("try-timeout");
        return;
      }
    }
    const body = this.#body;
    if (body.ended) {
      this.#ended();
      return;
    }
    if (!this.#listening) this.#listen(body.incoming);
    this.#wait("client-stalled");
    body.incoming.resume();
  }

  stop(): void {
    if (this.#sink === undefined) return;
    this.#sink = undefined;
    this.#wait(undefined);
    if (!this.#listening) return;
    const incoming = this.#body.incoming;
    // Whatever comes next waits for the next attempt's copy (or the clean-up of a body nobody read).
    incoming.pause();
    incoming.off("data", this.#onData);
    incoming.off("end", this.#onEnd);
    incoming.off("close", this.#onClose);
    incoming.off("error", this.#onError);
  }

  /** Each comes once, and stop() takes them all off: `on` spares the wrapper `once` makes. */
  #listen(incoming: IncomingBody): void {
    this.#listening = true;
    incoming.on("data", this.#onData);
    incoming.on("end", this.#onEnd);
    incoming.on("close", this.#onClose);
    incoming.on("error", this.#onError);
  }

  /** The body from its first byte again, for the same attempt on a fresh connection; undefined: not kept whole. */
  replay(): BodySource | undefined {
    return this.#body.kept === undefined ? undefined : new AttemptBody(this.#body, this.#attempt);
  }

  /** Waits on the client for its next bytes, on the backend to take those held, or (undefined) on neither. */
  #wait(on: "client-stalled" | "try-timeout" | undefined): void {
    this.#timer?.cancel();
    const { settings } = this.#body;
    const ms = on === "client-stalled" ? settings.clientBodyIdleTimeoutMs : settings.tryTimeoutMs;
    this.#timer = on === undefined ? undefined : new AttemptTimer(this.#attempt, on, ms);
  }

  /** The whole body went to the sink: the backend's time starts, then the sink ends its request. */
  #ended(): void {
    const sink = this.#sink;
    this.stop();
    this.#attempt.bodySent();
    sink?.bodyEnd();
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#body.read(chunk);
    const room = this.#sink?.bodyData(chunk);
    // The sink may have stopped the body in the call (a chunk past the declared length).
    if (this.#sink === undefined) return;
    if (!room) this.#body.incoming.pause();
    this.#wait(room ? "client-stalled" : "try-timeout");
  };

  readonly #onEnd = (): void => {
    this.#body.ended = true;
    this.#ended();
  };

  readonly #onClose = (): void => {
    if (!this.#body.incoming.readableEnded) this.#left(new Error("client went away while sending the body"));
  };

  readonly #onError = (error: Error): void => {
    this.#left(error);
  };

  #left(error: Error): void {
    const sink = this.#sink;
    this.stop();
    this.#attempt.clientLeft();
    sink?.bodyFailed(error);
  }
}

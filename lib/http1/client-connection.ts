import { connect, type Socket } from "node:net";
import { DeadlineEntry, Deadlines } from "../deadlines.js";
import { BodyUpload } from "./body-upload.js";
import { framingOf, requestHead } from "./outgoing-request-head.js";
import type { PendingRequest, RequestCarrier } from "./pending-request.js";
import { ResponseParser, type ResponseSink, ServerClosedError } from "./response-parser.js";

/** Connection-level waits (connect, keep-alive idleness, gaps in a response body) fire at most this late. */
const CONNECTION_TICK_MS = 100;
const connectionDeadlines = new Deadlines(CONNECTION_TICK_MS);

export interface ConnectionSettings {
  readonly connectTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly bodyTimeoutMs: number;
}

/** The pool a connection belongs to (origin-pool.ts). */
export interface ConnectionOwner {
  readonly settings: ConnectionSettings;
  /** The connection finished a response and may carry another request. */
  released(connection: ClientConnection): void;
  /** The connection is gone (closed by either side). */
  closed(connection: ClientConnection): void;
}

/** What a connection waits for besides its response: the connect, the next request, the next body bytes. */
class ConnectionTimer extends DeadlineEntry {
  reason: "connect" | "idle" | "body" = "connect";
  constructor(readonly connection: ClientConnection) {
    super();
  }
  expire(): void {
    this.connection.timedOut(this.reason);
  }
}

/**
 * One keep-alive HTTP/1.1 connection to an origin server, carrying one request at a time: the head written in one
 * piece, the body streamed with back-pressure (body-upload.ts), the response parsed (response-parser.ts) and
 * handed on as it arrives, reading paused while the handler cannot take more.
 */
export class ClientConnection implements ResponseSink, RequestCarrier {
  readonly #owner: ConnectionOwner;
  readonly #socket: Socket;
  readonly #parser = new ResponseParser(this);
  readonly #timer = new ConnectionTimer(this);
  #request: PendingRequest | undefined;
  #upload: BodyUpload | undefined;
  #connected = false;
  #destroyed = false;
  #socketPaused = false;
  /** A response body is under way and read: the body timer restarts with every read. */
  #watchingBody = false;
  /** The server closed while reading was paused: the end is due once the held bytes are read (resumeResponse). */
  #endedWhilePaused = false;
  /** Whether this connection carried a request before the current one (for the error a close reports). */
  #reused = false;

  constructor(owner: ConnectionOwner, host: string, port: number) {
    this.#owner = owner;
    // TCP keep-alive finds a server that vanished mid-response (its host gone) long before bodyTimeoutMs would.
    this.#socket = connect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 });
    this.#socket.on("connect", this.#onConnect);
    this.#socket.on("data", this.#onData);
    this.#socket.on("end", this.#onEnd);
    this.#socket.on("error", this.#onError);
    this.#socket.on("close", this.#onClose);
    this.#arm("connect", owner.settings.connectTimeoutMs);
  }

  get idle(): boolean {
    return this.#request === undefined && !this.#destroyed;
  }

  assign(pending: PendingRequest): void {
    this.#request = pending;
    pending.connection = this;
    if (this.#connected) {
      this.#disarm();
      this.#send(pending);
    }
  }

  /** Ends `pending` with `error` and closes the connection (what it carried is no longer in step). */
  fail(pending: PendingRequest, error: Error): void {
    if (this.#request === pending) this.#request = undefined;
    this.destroy();
    pending.fail(error);
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    connectionDeadlines.cancel(this.#timer);
    this.#upload?.stop();
    this.#upload = undefined;
    this.#socket.destroy();
  }

  timedOut(reason: ConnectionTimer["reason"]): void {
    const pending = this.#request;
    if (reason === "idle" || pending === undefined) {
      this.destroy();
      return;
    }
    const error =
      reason === "connect"
        ? Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT", syscall: "connect" })
        : Object.assign(new Error("backend stopped sending the response body"), {
            code: "UPSTREAM_BODY_TIMEOUT",
          });
    this.fail(pending, error);
  }

  resumeResponse(pending: PendingRequest): void {
    if (this.#request !== pending) return;
    try {
      // What was held while paused is parsed now, outside any socket event: a malformed rest fails the request
      // here, as it would have on arrival.
      this.#parser.resume();
    } catch (error) {
      if (this.#request === pending) this.fail(pending, error as Error);
      return;
    }
    if (this.#request !== pending || this.#parser.paused) return;
    this.#watchBody();
    if (this.#socketPaused && !this.#destroyed) {
      this.#socketPaused = false;
      this.#socket.resume();
    }
  }

  onResponseHead(status: number, reason: string, fields: string[]): void {
    const pending = this.#request;
    if (pending === undefined) return;
    this.#watchBody();
    pending.handler.onHead(status, reason, fields);
  }

  onResponseData(chunk: Buffer): boolean {
    const pending = this.#request;
    if (pending === undefined) return false;
    if (pending.handler.onData(chunk)) return true;
    if (this.#request === pending && !this.#socketPaused) {
      // Waiting on the handler, not the server: no body timeout until reading resumes.
      this.#disarm();
      this.#socketPaused = true;
      this.#socket.pause();
    }
    return false;
  }

  onResponseEnd(reusable: boolean): void {
    const pending = this.#request;
    if (pending === undefined) return;
    this.#request = undefined;
    pending.done = true;
    this.#disarm();
    // A response that ended before its request body was all sent leaves the upload unfinished: not reusable.
    const keep = reusable && this.#upload === undefined && !this.#destroyed;
    if (this.#socketPaused) {
      this.#socketPaused = false;
      this.#socket.resume();
    }
    pending.handler.onComplete();
    if (!keep) {
      this.destroy();
      return;
    }
    this.#reused = true;
    const hint = this.#parser.keepAliveHintMs;
    const keepAliveMs = Math.min(
      this.#owner.settings.keepAliveTimeoutMs,
      hint === undefined ? Infinity : hint - 1_000,
    );
    if (keepAliveMs <= 0) {
      this.destroy();
      return;
    }
    this.#arm("idle", keepAliveMs);
    this.#owner.released(this);
  }

  #arm(reason: ConnectionTimer["reason"], delayMs: number): void {
    this.#timer.reason = reason;
    connectionDeadlines.add(this.#timer, delayMs);
  }

  #watchBody(): void {
    this.#watchingBody = true;
    this.#arm("body", this.#owner.settings.bodyTimeoutMs);
  }

  #disarm(): void {
    this.#watchingBody = false;
    connectionDeadlines.cancel(this.#timer);
  }

  #send(pending: PendingRequest): void {
    const { method, path, headers, body } = pending.request;
    const framing = framingOf(method, headers, body !== null);
    let head: string;
    try {
      head = requestHead(method, path, headers, framing);
    } catch (error) {
      // Nothing was written: the connection stays good for the next request.
      this.#request = undefined;
      pending.fail(error as Error);
      this.#arm("idle", this.#owner.settings.keepAliveTimeoutMs);
      this.#owner.released(this);
      return;
    }
    this.#parser.expect(method === "HEAD");
    this.#socket.write(head, "latin1");
    if (body !== null) {
      this.#upload = new BodyUpload(this.#socket, body, framing === "chunked", {
        sent: () => {
          this.#upload = undefined;
        },
        failed: (error) => {
          if (this.#request === pending) this.fail(pending, error);
        },
      });
    }
  }

  readonly #onConnect = (): void => {
    this.#connected = true;
    connectionDeadlines.cancel(this.#timer);
    if (this.#request !== undefined) this.#send(this.#request);
  };

  readonly #onData = (chunk: Buffer): void => {
    const pending = this.#request;
    // Bytes while nothing was asked (a server's 408 before it closes an idle connection): no request's answer.
    if (pending === undefined || !this.#parser.awaiting) {
      this.destroy();
      return;
    }
    if (this.#watchingBody) this.#arm("body", this.#owner.settings.bodyTimeoutMs);
    try {
      this.#parser.execute(chunk);
    } catch (error) {
      if (this.#request === pending) this.fail(pending, error as Error);
      else this.destroy();
    }
  };

  readonly #onEnd = (): void => {
    const pending = this.#request;
    if (pending !== undefined && this.#parser.paused) {
      // Node ends a paused socket once its buffer is empty: the rest of the response is what the parser holds.
      this.#endedWhilePaused = true;
      this.#parser.closed();
      return;
    }
    try {
      this.#parser.closed();
    } catch (error) {
      if (pending !== undefined && this.#request === pending) {
        this.fail(pending, error as Error);
        return;
      }
    }
    this.destroy();
  };

  readonly #onError = (error: Error): void => {
    const pending = this.#request;
    if (pending === undefined) {
      this.destroy();
      return;
    }
    // A body that runs until the close cannot tell a reset from its end: ended.
    if (this.#parser.readsUntilClose && !this.#parser.paused) this.#onEnd();
    else this.fail(pending, error);
  };

  readonly #onClose = (): void => {
    this.#destroyed = true;
    connectionDeadlines.cancel(this.#timer);
    this.#upload?.stop();
    this.#upload = undefined;
    const pending = this.#request;
    if (pending !== undefined && !this.#endedWhilePaused) {
      this.#request = undefined;
      const closedBy = this.#reused ? "a kept-alive connection" : "the connection";
      pending.fail(new ServerClosedError(`backend closed ${closedBy} before the response ended`));
    }
    this.#owner.closed(this);
  };
}

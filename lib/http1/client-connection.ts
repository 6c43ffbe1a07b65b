import { BodyUpload } from "./body-upload.js";
import { LocalAbortError, ServerClosedError, timeoutError } from "./client-errors.js";
import { ConnectionSocket, type SocketConnector, type SocketListener } from "./connection-socket.js";
import { ConnectionTimer, type ConnectionWait, type TimedConnection } from "./connection-timer.js";
import { requestHead } from "./outgoing-request-head.js";
import type { PendingRequest, RequestCarrier } from "./pending-request.js";
import type { ResponseHead } from "./response-head.js";
import { ResponseParser, type ResponseSink } from "./response-parser.js";

/** The limits of one connection. */
export interface ConnectionSettings {
  readonly connectTimeoutMs: number;
  /** Idle connections are closed after this (a server's `Keep-Alive: timeout` hint wins if shorter). */
  readonly keepAliveTimeoutMs: number;
  /** Longest wait for the response head once the whole request was sent. */
  readonly responseHeadTimeoutMs: number;
  /** Longest gap between reads of a response body (not counted while the handler pauses reading). */
  readonly bodyTimeoutMs: number;
}

/** The pool a connection belongs to (origin-pool.ts). */
export interface ConnectionOwner {
  readonly settings: ConnectionSettings;
  /** The connection finished a response and may carry another request. */
  released(connection: ClientConnection): void;
  /** The connection is gone (closed by either side); `replay`: a request to send again on a fresh one (fail). */
  closed(connection: ClientConnection, replay: PendingRequest | undefined): void;
}

/**
 * One keep-alive HTTP/1.1 connection to an origin server, carrying one request at a time: the head written in one
 * piece, the body streamed with back-pressure (body-upload.ts), the response parsed (response-parser.ts) and
 * handed on as it arrives, reading paused while the handler cannot take more (connection-socket.ts).
 */
export class ClientConnection implements ResponseSink, RequestCarrier, TimedConnection, SocketListener {
  readonly #owner: ConnectionOwner;
  readonly #socket: ConnectionSocket;
  readonly #parser = new ResponseParser(this);
  readonly #timer = new ConnectionTimer(this);
  #request: PendingRequest | undefined;
  #upload: BodyUpload | undefined;
  #connected = false;
  #destroyed = false;
  /** This connection carried a request before the current one. */
  #reused = false;
  /** Bytes of the current request's response arrived. */
  #answering = false;
  /** The request to send again on a fresh connection once this one is closed (see fail). */
  #replay: PendingRequest | undefined;

  constructor(
    owner: ConnectionOwner,
    host: string,
    port: number,
    forUpgrade = false,
    connector?: SocketConnector,
  ) {
    this.#owner = owner;
    this.#socket = new ConnectionSocket(host, port, this, forUpgrade, connector);
    this.#timer.arm("connect", owner.settings.connectTimeoutMs);
  }

  get idle(): boolean {
    return this.#request === undefined && !this.#destroyed;
  }

  assign(pending: PendingRequest): void {
    this.#request = pending;
    pending.connection = this;
    if (this.#connected) this.#send(pending);
  }

  /**
   * Ends `pending` with `error` and closes the connection (what it carried is no longer in step). `lost`: the
   * server closed or reset it first. On a kept-alive connection, before any byte of the answer, it most likely
   * closed it as idle just as the request went out (its keep-alive timeout shorter than ours, unsaid): a request
   * that may be sent again goes once more, on a fresh connection (RFC 9112 §9.3.1), so the server's idle close
   * never fails it.
   */
  fail(pending: PendingRequest, error: Error, lost = false): void {
    if (this.#request === pending) this.#request = undefined;
    // Destroyed first: the upload lets go of the body's stream before the replay reads the body again.
    this.destroy();
    if (lost && this.#reused && !this.#answering && pending.rewind()) this.#replay = pending;
    else pending.fail(error);
  }

  /** Closes the connection from this side; a request under way fails with `reason`, a local abort. */
  destroy(reason?: Error): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#timer.cancel();
    this.#upload?.stop();
    this.#upload = undefined;
    this.#socket.socket.destroy();
    const pending = this.#request;
    this.#request = undefined;
    pending?.fail(reason ?? new LocalAbortError("connection closed on this side before the response ended"));
  }

  timedOut(wait: ConnectionWait): void {
    const pending = this.#request;
    if (wait === "idle" || pending === undefined) this.destroy();
    else this.fail(pending, timeoutError(wait));
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
    this.#socket.resume();
  }

  onResponseHead(head: ResponseHead): void {
    const pending = this.#request;
    if (pending === undefined) return;
    this.#watchBody();
    pending.handler.onHead(head);
  }

  onResponseData(chunk: Buffer): boolean {
    const pending = this.#request;
    if (pending === undefined) return false;
    // A handler that cannot say whether it keeps a chunk is given a copy (connection-socket.ts).
    if (pending.handler.holdsChunk === undefined) chunk = Buffer.from(chunk);
    else this.#socket.gave(pending.handler);
    if (pending.handler.onData(chunk)) return true;
    if (this.#request === pending) {
      // Waiting on the handler, not the server: no body timeout until reading resumes.
      this.#timer.cancel();
      this.#socket.pause();
    }
    return false;
  }

  onResponseEnd(reusable: boolean): void {
    const pending = this.#request;
    if (pending === undefined) return;
    this.#request = undefined;
    pending.done = true;
    this.#timer.cancel();
    // A response that ended before its request body was all sent leaves the upload unfinished: not reusable;
    // nor is the connection of an upgrade, its own (origin-pool.ts).
    const keep = reusable && this.#upload === undefined && !this.#destroyed && !pending.request.upgrade;
    this.#socket.resume();
    pending.handler.onComplete();
    // A second less than the server's Keep-Alive `timeout` hint when that is shorter: the server is not the one
    // to close the connection while a request goes out.
    const hintMs = this.#parser.keepAliveHintMs;
    const limitMs = this.#owner.settings.keepAliveTimeoutMs;
    const keepAliveMs = hintMs === undefined ? limitMs : Math.min(limitMs, hintMs - 1_000);
    if (!keep || keepAliveMs <= 0) {
      this.destroy();
      return;
    }
    this.#reused = true;
    this.#timer.arm("idle", keepAliveMs);
    this.#owner.released(this);
  }

  /** The server switched protocols: the socket leaves this client for the handler, as it is. */
  onResponseUpgrade(head: ResponseHead, rest: Buffer): void {
    const pending = this.#request;
    if (pending === undefined) return;
    this.#request = undefined;
    pending.done = true;
    this.#destroyed = true;
    this.#timer.cancel();
    const socket = this.#socket.release();
    this.#owner.closed(this, undefined);
    if (pending.handler.onUpgrade) pending.handler.onUpgrade(head, socket, rest);
    else socket.destroy();
  }

  /** A response body is under way and read: its timer restarts with every read. */
  #watchBody(): void {
    this.#timer.arm("body", this.#owner.settings.bodyTimeoutMs);
  }

  /** The whole request is on its way: the server's answer is awaited from now on. */
  #requestSent(): void {
    if (this.#parser.awaitingHead) this.#timer.arm("head", this.#owner.settings.responseHeadTimeoutMs);
  }

  #send(pending: PendingRequest): void {
    const request = pending.request;
    const body = pending.body;
    let head: string;
    try {
      head = requestHead(request);
    } catch (error) {
      // Nothing was written: the connection stays good for the next request.
      this.#request = undefined;
      pending.fail(error as Error);
      this.#timer.arm("idle", this.#owner.settings.keepAliveTimeoutMs);
      this.#owner.released(this);
      return;
    }
    this.#parser.expect(request.method === "HEAD", request.upgrade === true);
    this.#answering = false;
    this.#socket.socket.write(head, "latin1");
    // The idle wait ends here: the head's wait replaces it, or none runs while the body goes.
    if (body === null) {
      this.#requestSent();
      return;
    }
    this.#timer.cancel();
    this.#upload = new BodyUpload(this.#socket.socket, body, request.contentLength, {
      sent: () => {
        this.#upload = undefined;
        if (this.#request === pending) this.#requestSent();
      },
      failed: (error) => {
        if (this.#request === pending) this.fail(pending, error);
      },
    });
    this.#upload.start();
  }

  connected(): void {
    this.#connected = true;
    this.#timer.cancel();
    if (this.#request) this.#send(this.#request);
  }

  received(bytes: Buffer): void {
    const pending = this.#request;
    // Bytes while nothing was asked (a server's 408 before it closes an idle connection): no request's answer.
    if (pending === undefined || !this.#parser.awaiting) {
      this.destroy();
      return;
    }
    this.#answering = true;
    // Past the head, reads come only while the handler takes more (the socket is paused otherwise).
    if (!this.#parser.awaitingHead) this.#watchBody();
    try {
      this.#parser.execute(bytes);
    } catch (error) {
      if (this.#request === pending) this.fail(pending, error as Error);
      else this.destroy();
    }
  }

  ended(): void {
    const pending = this.#request;
    try {
      this.#parser.closed();
    } catch (error) {
      const lost = error instanceof ServerClosedError;
      if (pending !== undefined && this.#request === pending) this.fail(pending, error as Error, lost);
    }
    this.destroy();
  }

  /** A reset (or a failed write) is never a response's end, not even of one delimited by the close. */
  failed(error: Error): void {
    const pending = this.#request;
    if (pending === undefined) this.destroy();
    else this.fail(pending, error, this.#parser.awaitingHead);
  }

  closed(): void {
    const pending = this.#request;
    const message = "backend closed the connection before the response ended";
    if (pending !== undefined) this.fail(pending, new ServerClosedError(message), true);
    this.destroy();
    this.#owner.closed(this, this.#replay);
  }
}

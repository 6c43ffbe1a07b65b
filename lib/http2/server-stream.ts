import type { BodyListener } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
import { declaredLength, MALFORMED, type RequestControl, takeRequestControl } from "./field-rules.js";
import { ErrorCode, rstStreamFrame } from "./frames.js";
import { Http2StreamBase } from "./stream-base.js";

/** What a server stream tells its session (server-session.ts). */
export interface StreamHost {
  /** The request head passed its checks: the session hands the stream out once the read is handled. */
  requested(stream: ServerStream): void;
  /** The client reset the stream before our response ended (§6.4): counted against rapid reset. */
  cancelled(): void;
  /** We reset the stream for what the client sent (§5.4.2). */
  malformed(): void;
}

/** Until the session's user listens, the stream holds what comes (it starts paused). */
const NOBODY: BodyListener = {
  onData() {},
  onTrailers() {},
  onDrain() {},
  onClose() {},
};
const NO_CONTROL: RequestControl = { method: "", scheme: "", authority: "", path: "" };

/**
 * One request and our response on a server session (RFC 9113 §8.1): the request's control data and fields,
 * its content through the listener (held until `listen` and `resume`), our head, DATA and trailers.
 */
export class ServerStream extends Http2StreamBase<BodyListener> {
  /** The request's regular fields, flat and lowercase (no pseudo-header field). */
  fields: string[] = [];
  /** The request's HEADERS ended the stream: it has no content (§8.1). */
  endedWithHead = false;
  /** The session gave the stream to its user (server-session.ts). */
  handedOut = false;
  #control = NO_CONTROL;
  readonly #host: StreamHost;

  constructor(link: ConnectionLink, id: number, host: StreamHost) {
    super(link, NOBODY);
    this.#host = host;
    this.open(id);
    this.pause();
  }

  get method(): string {
    return this.#control.method;
  }
  get scheme(): string {
    return this.#control.scheme;
  }
  /** "" when the request carried no :authority. */
  get authority(): string {
    return this.#control.authority;
  }
  get path(): string {
    return this.#control.path;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  /** Our response head went. */
  get responded(): boolean {
    return this.headSent;
  }
  /** Our response ended (END_STREAM or trailers went). */
  get responseEnded(): boolean {
    return this.localEnded;
  }
  /** Who hears the request's content and the stream's end from now on; call resume() to take the content. */
  listen(listener: BodyListener): void {
    this.listener = listener;
  }

  /** The response head: `fields` open with ":status"; `endStream` when it has no content. */
  respond(fields: readonly string[], endStream: boolean): void {
    if (this.headSent || this.closed) return;
    if (endStream) this.endRequested = true;
    this.sendHead(fields);
  }

  /** An informational head (100 Continue, §8.1): no END_STREAM, and the final head still to come. */
  inform(fields: readonly string[]): void {
    if (!this.headSent && !this.closed) this.sendHead(fields, true);
  }

  override receiveReset(code: number): void {
    const answered = this.localEnded;
    super.receiveReset(code);
    if (!answered) this.#host.cancelled();
  }

  protected override acceptHead(fields: string[], endStream: boolean): number {
    const control = takeRequestControl(fields);
    if (control === undefined) return MALFORMED;
    this.#control = control;
    this.endedWithHead = endStream;
    return declaredLength(fields);
  }

  protected override deliverHead(fields: string[]): void {
    this.fields = fields;
    this.#host.requested(this);
  }

  /**
   * Our response is complete: what the request still holds or has yet to send is not needed. §8.1: a server
   * that answered before the request ended asks the client to stop with RST_STREAM(NO_ERROR); a request that
   * came whole but was never read (the router answered it itself) is dropped.
   */
  protected override localFinished(): void {
    if (!this.remoteEnded) this.link.write(rstStreamFrame(this.streamId as number, ErrorCode.NO_ERROR));
    this.terminate(ErrorCode.NO_ERROR, false, undefined);
  }

  protected override remoteFinished(): void {
    this.listener.onEnd?.();
    if (!this.closed) super.remoteFinished();
  }

  protected override fail(code: number, message: string): void {
    super.fail(code, message);
    this.#host.malformed();
  }
}

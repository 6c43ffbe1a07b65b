import type { BodySource, ExchangeHandler, OutgoingRequest, RequestControl } from "../http-exchange.js";

/** RFC 9110 §9.2.2: methods whose request may be sent again with the same effect. */
const IDEMPOTENT: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);

/** The connection a request runs on (client-connection.ts). */
export interface RequestCarrier {
  fail(pending: PendingRequest, error: Error): void;
  resumeResponse(pending: PendingRequest): void;
}

/** One request's life on the client: queued, then on a connection, then done (once). */
export class PendingRequest implements RequestControl {
  connection: RequestCarrier | undefined;
  done = false;
  /** The body to send: the request's, or its replay once the request goes again. */
  body: BodySource | null;

  constructor(
    readonly request: OutgoingRequest,
    readonly handler: ExchangeHandler,
    readonly unqueue: (pending: PendingRequest) => void,
  ) {
    this.body = request.body;
  }

  /**
   * Readies the request to go again from its first byte, on another connection (the server closed this one
   * before answering); false unless its method is idempotent (RFC 9110 §9.2.2) and it has no body or one its
   * sender can give again whole.
   */
  rewind(): boolean {
    const { method, body } = this.request;
    if (!IDEMPOTENT.has(method)) return false;
    const again = body === null ? null : body.replay?.();
    if (again !== undefined) this.body = again;
    return again !== undefined;
  }

  abort(error: Error): void {
    if (this.done) return;
    if (this.connection) this.connection.fail(this, error);
    else {
      this.unqueue(this);
      this.fail(error);
    }
  }

  resume(): void {
    this.connection?.resumeResponse(this);
  }

  fail(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.handler.onError(error);
  }
}

import type { ExchangeHandler, OutgoingRequest, RequestControl } from "./exchange-handler.js";

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

  constructor(
    readonly request: OutgoingRequest,
    readonly handler: ExchangeHandler,
    readonly unqueue: (pending: PendingRequest) => void,
  ) {}

  /**
   * The request may go again on another connection when the server closed this one before answering: its
   * method is idempotent (RFC 9110 §9.2.2) and it has no body, which was read once and cannot be read again.
   */
  get replayable(): boolean {
    return this.request.body === null && IDEMPOTENT.has(this.request.method);
  }

  abort(error: Error): void {
    if (this.done) return;
    if (this.connection) {
      this.connection.fail(this, error);
      return;
    }
    this.unqueue(this);
    this.fail(error);
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

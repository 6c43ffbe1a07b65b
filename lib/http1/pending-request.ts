import type { ExchangeHandler, OutgoingRequest, RequestControl } from "./exchange-handler.js";

/** The connection a request runs on (connection.ts). */
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

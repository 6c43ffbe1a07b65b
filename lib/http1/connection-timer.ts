import { DeadlineEntry, Deadlines } from "../deadlines.js";

/** Connection-level waits fire at most 100 ms late: they are configured in seconds. */
const connectionDeadlines = new Deadlines(100);

/**
 * What a connection waits for besides the handler: the connect, the next request while idle, the response head
 * once the request was sent, the next bytes of the response body.
 */
export type ConnectionWait = "connect" | "idle" | "head" | "body";

export interface TimedConnection {
  timedOut(wait: ConnectionWait): void;
}

/** The one deadline of a connection: one wait at a time. */
export class ConnectionTimer extends DeadlineEntry {
  #wait: ConnectionWait = "connect";

  constructor(readonly connection: TimedConnection) {
    super();
  }

  arm(wait: ConnectionWait, delayMs: number): void {
    this.#wait = wait;
    connectionDeadlines.add(this, delayMs);
  }

  cancel(): void {
    connectionDeadlines.cancel(this);
  }

  expire(): void {
    this.connection.timedOut(this.#wait);
  }
}

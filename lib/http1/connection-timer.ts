import { DeadlineEntry, Deadlines } from "../deadlines.js";

/** Connection-level waits fire at most this late: they are configured in seconds. */
const CONNECTION_TICK_MS = 100;
const connectionDeadlines = new Deadlines(CONNECTION_TICK_MS);

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

/**
 * How long an idle connection is kept: `limitMs`, or a second less than the server's Keep-Alive `timeout` hint
 * when that is shorter, so the server is not the one to close it while a request goes out.
 */
export function idleLimitMs(limitMs: number, hintMs: number | undefined): number {
  return hintMs === undefined ? limitMs : Math.min(limitMs, hintMs - 1_000);
}

/** The limits of one connection (client-connection.ts). */
export interface ConnectionSettings {
  readonly connectTimeoutMs: number;
  /** Idle connections are closed after this (a server's `Keep-Alive: timeout` hint wins if shorter). */
  readonly keepAliveTimeoutMs: number;
  /** Longest wait for the response head once the whole request was sent. */
  readonly responseHeadTimeoutMs: number;
  /** Longest gap between reads of a response body (not counted while the handler pauses reading). */
  readonly bodyTimeoutMs: number;
}

/** The limits of the pool of connections to one server (origin-pool.ts). */
export interface PoolSettings extends ConnectionSettings {
  /** Connections open at most to the server; requests past them wait for one to be free. */
  readonly connections: number;
}

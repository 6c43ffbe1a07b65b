import type { ExchangeDispatcher, ExchangeHandler, OutgoingRequest } from "../http-exchange.js";
import { ClientConnection, type ConnectionOwner, type ConnectionSettings } from "./client-connection.js";
import { LocalAbortError } from "./client-errors.js";
import type { SocketConnector } from "./connection-socket.js";
import { PendingRequest } from "./pending-request.js";

/** The limits of the pool of connections to one server. */
export interface PoolSettings extends ConnectionSettings {
  /** Connections open at most to the server; requests past them wait for one to be free. */
  readonly connections: number;
}

/**
 * The keep-alive connections to one origin server: a request takes the most recently used idle connection (the
 * one least likely to have been closed by the server's own idle timeout), else a new one while under the
 * limit, else waits in line for the next to be released.
 */
export class OriginPool implements ExchangeDispatcher, ConnectionOwner {
  readonly #connections = new Set<ClientConnection>();
  readonly #idle: ClientConnection[] = [];
  readonly #waiting: PendingRequest[] = [];
  #closing: (() => void) | undefined;
  #destroyed = false;

  /** `connector`: how each connection's socket is opened (TLS); default plain TCP. */
  constructor(
    readonly host: string,
    readonly port: number,
    readonly settings: PoolSettings,
    readonly connector?: SocketConnector,
  ) {}

  dispatch(request: OutgoingRequest, handler: ExchangeHandler): void {
    const pending = new PendingRequest(request, handler, this.#unqueue);
    handler.onStart(pending);
    if (pending.done) return;
    // An upgrade takes a connection of its own: on a 101 it leaves the pool (client-connection.ts). The most
    // recently used idle connection goes first; one destroyed since it went idle waits only for its 'close'.
    let idle = request.upgrade === true ? undefined : this.#idle.pop();
    while (idle !== undefined && !idle.idle) idle = this.#idle.pop();
    if (idle !== undefined) idle.assign(pending);
    else if (request.upgrade === true || this.#connections.size < this.settings.connections) {
      this.#open(request.upgrade === true).assign(pending);
    } else this.#waiting.push(pending);
  }

  /** Requests on a connection or waiting for one. */
  get busy(): number {
    return this.#connections.size - this.#idle.length + this.#waiting.length;
  }

  get open(): number {
    return this.#connections.size;
  }

  released(connection: ClientConnection): void {
    const next = this.#waiting.shift();
    if (next !== undefined) connection.assign(next);
    else if (this.#closing) connection.destroy();
    else this.#idle.push(connection);
  }

  closed(connection: ClientConnection, replay: PendingRequest | undefined): void {
    this.#connections.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    // A request to send again was under way already: it goes before the ones waiting.
    if (this.#destroyed) replay?.fail(new LocalAbortError("connection pool destroyed"));
    const next = replay !== undefined && !replay.done ? replay : this.#waiting.shift();
    if (next !== undefined) this.#open().assign(next);
    else if (this.#closing && this.#connections.size === 0) this.#closing();
  }

  /** Lets the requests under way finish, then closes every connection. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#closing = resolve;
      for (const connection of [...this.#idle]) connection.destroy();
      if (this.#connections.size === 0) resolve();
    });
  }

  /** Closes every connection now, failing what they carry and what waits. */
  destroy(): void {
    this.#closing ??= () => undefined;
    this.#destroyed = true;
    const reason = new LocalAbortError("connection pool destroyed");
    for (const pending of this.#waiting.splice(0)) pending.fail(reason);
    for (const connection of [...this.#connections]) connection.destroy(reason);
  }

  #open(forUpgrade = false): ClientConnection {
    const connection = new ClientConnection(this, this.host, this.port, forUpgrade, this.connector);
    this.#connections.add(connection);
    return connection;
  }

  readonly #unqueue = (pending: PendingRequest): void => {
    const at = this.#waiting.indexOf(pending);
    if (at >= 0) this.#waiting.splice(at, 1);
  };
}

import { type ClientHttp2Session, connect, constants } from "node:http2";
import { connect as netConnect } from "node:net";
import { endpointAddress } from "../../../store/records.js";
import type { UpstreamTarget } from "../../transports/upstream.js";

/** How the router's HTTP/2 cleartext connections to one backend behave (docs/configuration.md: H2C_* settings). */
export interface H2cSettings {
  /** Sessions (TCP connections) one backend may have; past it, streams share the least busy session. */
  readonly sessionsPerBackend: number;
  /** Streams the router opens on one session before it opens another, below the peer's own limit. */
  readonly streamsPerSession: number;
  /** TCP connect and the peer's first SETTINGS must come within this. */
  readonly connectTimeoutMs: number;
  /** A session with no stream for this long is closed (GOAWAY): backends come and go with pods. */
  readonly idleSessionMs: number;
}

export const DEFAULT_H2C_SETTINGS: H2cSettings = {
  sessionsPerBackend: 4,
  streamsPerSession: 100,
  connectTimeoutMs: 5_000,
  idleSessionMs: 60_000,
};

/** Idle time before the first TCP keep-alive probe on a session's connection. */
const KEEP_ALIVE_INITIAL_DELAY_MS = 30_000;

/** The connect did not finish in time: nothing was sent, so any method may go to another backend. */
class H2cConnectTimeoutError extends Error {
  override readonly name = "H2cConnectTimeoutError";
  readonly code = "ETIMEDOUT";
  /** connect-errors.ts reads `syscall: "connect"` as "nothing reached the backend". */
  readonly syscall = "connect";
}

/** Told once the session can carry its stream, or why it never will (the request itself: no closure per stream). */
export interface SessionWaiter {
  sessionReady(session: H2cSession, error: Error | undefined): void;
}

/**
 * One HTTP/2 cleartext connection to a backend, with prior knowledge (RFC 9113 §3.3: the client preface is
 * sent at once, no Upgrade). It counts its own streams, because the peer's SETTINGS_MAX_CONCURRENT_STREAMS
 * (RFC 9113 §6.5.2) is what decides when the origin opens another session; a GOAWAY (§6.8) or an error takes
 * it out of use, and the streams it still carries finish.
 */
export class H2cSession {
  readonly session: ClientHttp2Session;
  /** Streams open on this session (ours: started and not closed). */
  active = 0;
  /** GOAWAY received or sent, or closed: no new stream goes here. */
  retired = false;
  /** The last stream id the peer's GOAWAY said it processes; streams above were never processed (§6.8). */
  goawayLastStreamId: number | undefined;
  #connected = false;
  #waiters: SessionWaiter[] | undefined = [];
  #idle: NodeJS.Timeout | undefined;
  readonly #settings: H2cSettings;
  readonly #onRetired: (session: H2cSession) => void;

  /** The peer's stream limit assumed until its SETTINGS arrive. */
  readonly #assumedPeerLimit: number;

  constructor(
    target: UpstreamTarget,
    settings: H2cSettings,
    onRetired: (session: H2cSession) => void,
    assumedPeerLimit = 100,
  ) {
    this.#assumedPeerLimit = assumedPeerLimit;
    this.#settings = settings;
    this.#onRetired = onRetired;
    const session = connect(`http://${endpointAddress(target)}`, {
      // TCP keep-alive, as the HTTP/1.1 pools have it: a backend that vanished without a FIN (a node lost, a
      // partition) fails its session's streams once probes go unanswered, where a gRPC stream may rightly
      // be silent for a long time and no idle timeout may cut it.
      createConnection: () =>
        netConnect({
          host: target.ip,
          port: target.port,
          noDelay: true,
          keepAlive: true,
          keepAliveInitialDelay: KEEP_ALIVE_INITIAL_DELAY_MS,
        }),
      settings: { enablePush: false },
      // The peer's limit decides; until its SETTINGS arrive, RFC 9113 §6.5.2's recommended minimum.
      peerMaxConcurrentStreams: 100,
    });
    this.session = session;
    const timer = setTimeout(() => {
      session.destroy(new H2cConnectTimeoutError(`h2c connect to ${endpointAddress(target)} timed out`));
    }, settings.connectTimeoutMs);
    session.once("remoteSettings", () => {
      clearTimeout(timer);
      this.#connected = true;
      this.#wake(undefined);
    });
    session.once("goaway", (_code: number, lastStreamId: number) => {
      this.goawayLastStreamId = lastStreamId;
      this.#retire();
    });
    session.on("error", (error: Error) => {
      clearTimeout(timer);
      this.#wake(error);
    });
    session.once("close", () => {
      clearTimeout(timer);
      clearTimeout(this.#idle);
      this.#wake(new Error("h2c session closed before it was ready"));
      this.#retire();
    });
    // Neither the session nor its idle timer keeps the process alive.
    session.unref();
  }

  /** How many streams this session takes before the origin opens another: the lower of ours and the peer's. */
  get capacity(): number {
    return Math.min(this.peerLimit, this.#settings.streamsPerSession);
  }

  /**
   * The peer's SETTINGS_MAX_CONCURRENT_STREAMS once its SETTINGS came (100, RFC 9113 §6.5.2's recommended
   * minimum, when it sets none), the assumed limit before.
   */
  get peerLimit(): number {
    return this.#connected
      ? (this.session.remoteSettings.maxConcurrentStreams ?? 100)
      : this.#assumedPeerLimit;
  }

  /** `waiter` runs once the peer's SETTINGS came (at once when they did), or with the connect's error. */
  whenReady(waiter: SessionWaiter): void {
    if (this.#waiters === undefined) {
      const error = this.#connected && !this.session.destroyed ? undefined : new Error("h2c session closed");
      waiter.sessionReady(this, error);
    } else this.#waiters.push(waiter);
  }

  /** A stream opened on this session. */
  opened(): void {
    this.active++;
    clearTimeout(this.#idle);
    this.#idle = undefined;
  }

  /** A stream of this session closed: with none left, the session is closed once idle for idleSessionMs. */
  closed(): void {
    this.active--;
    if (this.active > 0) return;
    if (this.retired) {
      this.session.close();
      return;
    }
    this.#idle = setTimeout(() => this.close(), this.#settings.idleSessionMs);
    this.#idle.unref();
  }

  /** GOAWAY with NO_ERROR: the streams under way finish, then the connection closes. */
  close(): void {
    this.#retire();
    if (!this.session.closed && !this.session.destroyed) this.session.close();
  }

  destroy(): void {
    this.#retire();
    this.session.destroy(undefined, constants.NGHTTP2_CANCEL);
  }

  #retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.#onRetired(this);
  }

  #wake(error: Error | undefined): void {
    const waiters = this.#waiters;
    if (waiters === undefined) return;
    this.#waiters = undefined;
    for (const waiter of waiters) waiter.sessionReady(this, error);
  }
}

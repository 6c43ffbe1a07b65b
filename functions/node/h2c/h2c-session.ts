import { connect as netConnect } from "node:net";
import { ErrorCode, Http2ClientSession, type SessionListener } from "../../../lib/http2/client-session.js";

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

/** RFC 9113 §6.5.2's recommended minimum of SETTINGS_MAX_CONCURRENT_STREAMS: assumed until the peer tells its own. */
const DEFAULT_PEER_LIMIT = 100;

/**
 * TCP keep-alive, as the HTTP/1.1 pools have it: a backend that vanished without a FIN (a node lost, a partition)
 * fails its session's streams once probes go unanswered, where a gRPC stream may rightly be silent for a long
 * time and no idle timeout may cut it.
 */
const SOCKET_OPTIONS = { noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000 };

/** Told once the session can carry its stream, or why it never will (the request itself: no closure per stream). */
export interface SessionWaiter {
  sessionReady(session: H2cSession, error: Error | undefined): void;
}

/**
 * One HTTP/2 cleartext connection to a backend, with prior knowledge (RFC 9113 §3.3: the client preface is
 * sent at once, no Upgrade), on the router's own HTTP/2 client (lib/http2/). It counts its own streams,
 * because the peer's SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §6.5.2) is what decides when the origin opens
 * another session; a GOAWAY (§6.8) or an error takes it out of use, and the streams it still carries finish.
 */
export class H2cSession implements SessionListener {
  readonly session: Http2ClientSession;
  /** Streams open on this session (ours: started and not closed). */
  active = 0;
  /** GOAWAY received or sent, or closed: no new stream goes here. */
  retired = false;
  /** The last stream id the peer's GOAWAY said it processes; streams above were never processed (§6.8). */
  goawayLastStreamId: number | undefined;
  #waiters: SessionWaiter[] | undefined = [];
  /** Refreshed each time the last stream closes (no timer per idle spell); finding streams open, it waits. */
  readonly #idle: NodeJS.Timeout;
  readonly #connecting: NodeJS.Timeout;
  readonly #origin: H2cOrigin;
  /** The peer's stream limit assumed until its SETTINGS arrive. */
  readonly #assumedPeerLimit: number;

  constructor(origin: H2cOrigin, assumedPeerLimit = DEFAULT_PEER_LIMIT) {
    const { target, settings } = origin;
    this.#origin = origin;
    this.#assumedPeerLimit = assumedPeerLimit;
    const socket = netConnect({ host: target.ip, port: target.port, ...SOCKET_OPTIONS });
    // Neither the connection nor its timers keep the process alive.
    socket.unref();
    this.session = new Http2ClientSession(socket, this);
    this.#connecting = setTimeout(() => {
      // Nothing was sent, so any method may go to another backend (connect-errors.ts reads `syscall`).
      const error = new Error(`h2c connect to ${endpointAddress(target)} timed out`);
      this.session.destroy(
        Object.assign(error, { name: "H2cConnectTimeoutError", code: "ETIMEDOUT", syscall: "connect" }),
      );
    }, settings.connectTimeoutMs);
    this.#idle = setTimeout(() => {
      if (this.active === 0) this.close();
    }, settings.idleSessionMs).unref();
  }

  onReady(): void {
    clearTimeout(this.#connecting);
    this.#wake(undefined);
  }

  onGoaway(lastStreamId: number): void {
    this.goawayLastStreamId = lastStreamId;
    this.#retire();
  }

  onClose(error: Error | undefined): void {
    clearTimeout(this.#connecting);
    clearTimeout(this.#idle);
    this.#wake(error ?? new Error("h2c session closed before it was ready"));
    this.#retire();
  }

  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS once its SETTINGS came (100 when it sets none), the assumed limit before. */
  get peerLimit(): number {
    return this.session.ready
      ? (this.session.peerMaxConcurrentStreams ?? DEFAULT_PEER_LIMIT)
      : this.#assumedPeerLimit;
  }

  /** `waiter` runs once the peer's SETTINGS came (at once when they did), or with the connect's error. */
  whenReady(waiter: SessionWaiter): void {
    if (this.#waiters === undefined) {
      const usable = this.session.ready && !this.session.destroyed;
      waiter.sessionReady(this, usable ? undefined : new Error("h2c session closed"));
    } else this.#waiters.push(waiter);
  }

  /** A stream of this session closed: with none left, the session is closed once idle for idleSessionMs. */
  closed(): void {
    if (--this.active > 0) return;
    if (this.retired) this.session.close();
    else this.#idle.refresh();
  }

  /** GOAWAY with NO_ERROR: the streams under way finish, then the connection closes. */
  close(): void {
    this.#retire();
    this.session.close();
  }

  destroy(): void {
    this.#retire();
    this.session.destroy(undefined, ErrorCode.CANCEL);
  }

  #retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.#origin.forget(this);
  }

  #wake(error: Error | undefined): void {
    const waiters = this.#waiters;
    if (waiters === undefined) return;
    this.#waiters = undefined;
    for (const waiter of waiters) waiter.sessionReady(this, error);
  }
}

/**
 * The HTTP/2 cleartext sessions of one backend: one is enough until its streams reach its capacity (the
 * peer's SETTINGS_MAX_CONCURRENT_STREAMS, or H2C_STREAMS_PER_SESSION when lower), then another opens, up to
 * sessionsPerBackend; past that the least busy session takes the stream, and the HTTP/2 library holds it
 * until the peer lets it open (RFC 9113 §5.1.2).
 */
export class H2cOrigin {
  #sessions: H2cSession[] = [];

  constructor(
    readonly target: UpstreamTarget,
    readonly settings: H2cSettings,
  ) {}

  /** Streams open across the sessions: a busy origin is never closed for idleness. */
  get busy(): boolean {
    return this.#sessions.some((session) => session.active > 0);
  }

  /** The session the next stream goes on, counted as opened; `waiter` hears once it can carry the stream. */
  acquire(waiter: SessionWaiter): void {
    const session = this.#pick();
    session.active++;
    session.whenReady(waiter);
  }

  /** A session retired: no new stream goes to it. */
  forget(retired: H2cSession): void {
    this.#sessions = this.#sessions.filter((session) => session !== retired);
  }

  close(): void {
    for (const session of this.#sessions) session.close();
  }

  destroy(): void {
    for (const session of this.#sessions) session.destroy();
  }

  #pick(): H2cSession {
    let least: H2cSession | undefined;
    for (const session of this.#sessions) {
      // A session out of stream ids takes no more (it closes once its streams finished).
      if (!session.session.acceptingRequests) continue;
      // The lower of our limit and the peer's: past it, another session opens.
      if (session.active < Math.min(session.peerLimit, this.settings.streamsPerSession)) return session;
      if (least === undefined || session.active < least.active) least = session;
    }
    if (least !== undefined && this.#sessions.length >= this.settings.sessionsPerBackend) return least;
    // A new session of a backend whose other sessions told their limit assumes it until its own SETTINGS come,
    // so a burst does not pile onto it past what the backend allows.
    const opened = new H2cSession(this, least?.peerLimit);
    this.#sessions.push(opened);
    return opened;
  }
}

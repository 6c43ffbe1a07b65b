import type { UpstreamTarget } from "../../transports/upstream.js";
import { H2cSession, type H2cSettings, type SessionWaiter } from "./h2c-session.js";

/**
 * The HTTP/2 cleartext sessions of one backend: one is enough until its streams reach its capacity (the
 * peer's SETTINGS_MAX_CONCURRENT_STREAMS, or H2C_STREAMS_PER_SESSION when lower), then another opens, up to
 * sessionsPerBackend; past that the least busy session takes the stream, and the HTTP/2 library holds it
 * until the peer lets it open (RFC 9113 §5.1.2).
 */
export class H2cOrigin {
  readonly #target: UpstreamTarget;
  readonly #settings: H2cSettings;
  #sessions: H2cSession[] = [];

  constructor(target: UpstreamTarget, settings: H2cSettings) {
    this.#target = target;
    this.#settings = settings;
  }

  /** Streams open across the sessions: a busy origin is never closed for idleness. */
  get busy(): boolean {
    return this.#sessions.some((session) => session.active > 0);
  }

  get sessionCount(): number {
    return this.#sessions.length;
  }

  /** The session the next stream goes on, counted as opened; `waiter` hears once it can carry the stream. */
  acquire(waiter: SessionWaiter): void {
    const session = this.#pick();
    session.opened();
    session.whenReady(waiter);
  }

  close(): void {
    for (const session of this.#sessions) session.close();
  }

  destroy(): void {
    for (const session of [...this.#sessions]) session.destroy();
  }

  #pick(): H2cSession {
    let least: H2cSession | undefined;
    for (const session of this.#sessions) {
      if (session.active < session.capacity) return session;
      if (least === undefined || session.active < least.active) least = session;
    }
    if (least !== undefined && this.#sessions.length >= this.#settings.sessionsPerBackend) return least;
    // A new session of a backend whose other sessions told their limit assumes it until its own SETTINGS come,
    // so a burst does not pile onto it past what the backend allows.
    const opened = new H2cSession(
      this.#target,
      this.#settings,
      (retired) => {
        this.#sessions = this.#sessions.filter((session) => session !== retired);
      },
      least?.peerLimit,
    );
    this.#sessions.push(opened);
    return opened;
  }
}

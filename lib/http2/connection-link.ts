import type { Socket } from "node:net";
import type { Http2Stream } from "./client-stream.js";
import { DEFAULT_MAX_FRAME_SIZE, DEFAULT_WINDOW } from "./frames.js";

/** DATA waits while the socket holds this much unsent: flow-control windows alone would let a slow peer's grants pile up in memory. */
const SEND_BACKLOG = 256 * 1024;

/**
 * What a session's streams share: the socket's output, batched per tick (corked on the first frame, uncorked
 * in process.nextTick, so one writev carries a tick's frames), the connection's send window and the peer's
 * settings that shape DATA and HEADERS.
 */
export class ConnectionLink {
  readonly socket: Socket;
  /** Our SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window. */
  readonly streamWindow: number;
  /** §6.9.1: the connection-level send window. */
  sendWindow = DEFAULT_WINDOW;
  /** §6.5.2: the peer's SETTINGS_INITIAL_WINDOW_SIZE and SETTINGS_MAX_FRAME_SIZE. */
  peerInitialWindow = DEFAULT_WINDOW;
  peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  /** Streams with DATA waiting for a window or for the socket. */
  readonly waiting = new Set<Http2Stream>();
  /** Counts uncorks: a frame written in the same generation is still in the socket's hands, unsent. */
  generation = 0;
  #corked = false;
  readonly #closed: (stream: Http2Stream) => void;
  readonly #settled: () => void;

  constructor(
    socket: Socket,
    streamWindow: number,
    closed: (stream: Http2Stream) => void,
    settled: () => void,
  ) {
    this.socket = socket;
    this.streamWindow = streamWindow;
    this.#closed = closed;
    this.#settled = settled;
  }

  get corked(): boolean {
    return this.#corked;
  }

  /** The socket holds enough unsent: DATA waits for its 'drain'. */
  get backlogged(): boolean {
    return this.socket.writableLength >= SEND_BACKLOG;
  }

  write(frame: Buffer): void {
    const socket = this.socket;
    if (socket.writableEnded || socket.destroyed) return;
    if (!this.#corked) {
      this.#corked = true;
      socket.cork();
      process.nextTick(this.#uncork);
    }
    socket.write(frame);
  }

  /** Sends what this tick wrote now. */
  flush(): void {
    if (this.#corked) this.#uncork();
  }

  /** A stream left the session (before its listener hears onClose). */
  detach(stream: Http2Stream): void {
    this.waiting.delete(stream);
    this.#closed(stream);
  }

  /** After a stream's onClose: queued streams may go, a closing session may end. */
  settle(): void {
    this.#settled();
  }

  readonly #uncork = (): void => {
    if (!this.#corked) return;
    this.#corked = false;
    this.generation++;
    this.socket.uncork();
  };
}

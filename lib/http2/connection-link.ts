import type { Socket } from "node:net";
import { DEFAULT_MAX_FRAME_SIZE, DEFAULT_WINDOW } from "./frames.js";

/** A stream as the link holds it (client-stream.ts): it sends what waited once there is room. */
export interface LinkedStream {
  readonly id: number | undefined;
  flush(): void;
}

/** DATA waits while the socket holds this much unsent: flow-control windows alone would let a slow peer's grants pile up in memory. */
const SEND_BACKLOG = 256 * 1024;

/**
 * What a session's streams share: the socket's output, batched per tick (corked on the first frame, uncorked
 * in process.nextTick, so one writev carries a tick's frames), the connection's send window, the peer's
 * settings that shape DATA and HEADERS, and the session's hooks for a stream that closes.
 */
export class ConnectionLink {
  /** §6.9.1: the connection-level send window. */
  sendWindow = DEFAULT_WINDOW;
  /** §6.5.2: the peer's SETTINGS_INITIAL_WINDOW_SIZE and SETTINGS_MAX_FRAME_SIZE. */
  peerInitialWindow = DEFAULT_WINDOW;
  peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  /** Streams with DATA waiting for the connection's window or for the socket (their own window open). */
  readonly waiting = new Set<LinkedStream>();
  /** What is written is corked until the tick's end; `generation` counts uncorks. */
  corked = false;
  generation = 0;

  constructor(
    readonly socket: Socket,
    /** Our SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window. */
    readonly streamWindow: number,
    /** A stream leaves the session (before its listener hears onClose). */
    readonly detach: (stream: LinkedStream) => void,
    /** After a stream's onClose: queued streams may go, a closing session may end. */
    readonly settle: () => void,
  ) {}

  /** The socket holds enough unsent: DATA waits for its 'drain'. */
  get backlogged(): boolean {
    return this.socket.writableLength >= SEND_BACKLOG;
  }

  write(frame: Buffer): void {
    const socket = this.socket;
    if (socket.writableEnded || socket.destroyed) return;
    if (!this.corked) {
      this.corked = true;
      socket.cork();
      process.nextTick(this.#uncork);
    }
    socket.write(frame);
  }

  /** Sends what this tick wrote now. */
  flush(): void {
    if (this.corked) this.#uncork();
  }

  readonly #uncork = (): void => {
    if (!this.corked) return;
    this.corked = false;
    this.generation++;
    this.socket.uncork();
  };
}

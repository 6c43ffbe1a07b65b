import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { AbortCause, ProxySettings } from "../core/proxy-policy.js";
import type { CuttableAttempt } from "./attempt-bounds.js";

/** What the body tells the attempt it streams to (node/proxy.ts). */
export interface BodyAttempt extends CuttableAttempt {
  /** The upstream connection is ready and asks for the body: from now on the body's timers bound the upload. */
  bodyStarted(): void;
  /** The whole body was handed to the upstream connection: the backend's time (per-try and total timeouts) starts. */
  bodySent(): void;
  /** The client went away or failed while sending its body: its doing, not the backend's. */
  clientLeft(): void;
}

/**
 * The client's body, streamed to one attempt at a time. Nothing is read from the client before the upstream
 * connection asks for it (once connected and the head is written), and a failed attempt never destroys the
 * client's stream: a body still unread can go whole to the next backend; once read, it cannot be sent again.
 *
 * While it streams, one timer watches whoever holds it up: the client, when the connection asked for more and
 * no bytes came for `clientBodyIdleTimeoutMs` (408, the backend not blamed); the backend, when it stopped taking
 * bytes we hold for the per-try timeout (a try timeout, as for a backend slow to answer).
 */
export class RequestBody {
  consumed = false;
  readonly #incoming: IncomingMessage;
  readonly #settings: Pick<ProxySettings, "tryTimeoutMs" | "clientBodyIdleTimeoutMs">;

  constructor(
    incoming: IncomingMessage,
    settings: Pick<ProxySettings, "tryTimeoutMs" | "clientBodyIdleTimeoutMs">,
  ) {
    this.#incoming = incoming;
    this.#settings = settings;
  }

  forAttempt(attempt: BodyAttempt): Readable {
    const incoming = this.#incoming;
    const settings = this.#settings;
    let attached = false;
    let timer: NodeJS.Timeout | undefined;
    let waitingOn: "client" | "backend" | undefined;
    const wait = (on: "client" | "backend") => {
      if (waitingOn === on) return;
      clearTimeout(timer);
      waitingOn = on;
      timer =
        on === "client"
          ? setTimeout(cutAttempt, settings.clientBodyIdleTimeoutMs, attempt, "client-stalled")
          : setTimeout(cutAttempt, settings.tryTimeoutMs, attempt, "try-timeout");
    };
    const stopWaiting = () => {
      clearTimeout(timer);
      waitingOn = undefined;
    };
    const onData = (chunk: Buffer) => {
      stopWaiting();
      if (!stream.push(chunk)) {
        incoming.pause();
        wait("backend");
      }
    };
    const onEnd = () => {
      stopWaiting();
      stream.push(null);
    };
    const onClose = () => {
      if (incoming.readableEnded) return;
      stopWaiting();
      attempt.clientLeft();
      stream.destroy(new Error("client went away while sending the body"));
    };
    const onError = (error: Error) => {
      stopWaiting();
      attempt.clientLeft();
      stream.destroy(error);
    };
    const stream = new Readable({
      read: () => {
        if (!attached) {
          attached = true;
          this.consumed = true;
          attempt.bodyStarted();
          incoming.on("data", onData);
          incoming.once("end", onEnd);
          incoming.once("close", onClose);
          incoming.once("error", onError);
        }
        if (!incoming.readableEnded) wait("client");
        incoming.resume();
      },
      destroy: (error, callback) => {
        stopWaiting();
        if (attached) {
          incoming.off("data", onData);
          incoming.off("end", onEnd);
          incoming.off("close", onClose);
          incoming.off("error", onError);
        }
        callback(error);
      },
    });
    stream.once("end", () => attempt.bodySent());
    return stream;
  }
}

function cutAttempt(attempt: CuttableAttempt, cause: AbortCause): void {
  attempt.cut(cause);
}

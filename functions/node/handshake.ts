import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import {
  type AbortCause,
  type AttemptResult,
  type Attempts,
  noteAnswer,
  type PolicyDeps,
  upgradeFailure,
} from "../core/proxy-policy.js";
import type { Backend } from "../core/selection.js";
import { failedAttempt } from "../transports/connect-errors.js";
import { armAttemptTimer, type CuttableAttempt, refusedAttempt } from "./attempt-bounds.js";

/**
 * One upgrade request (upgrade.ts) and its attempts under the shared policy (core/proxy-policy.ts). The
 * backend request goes over node:http's client on a fresh connection, not undici's `upgrade()` on the
 * backend's pool: undici rejects any answer but 101 with "bad upgrade" and drops it, while a backend's
 * 400/401/403/404 must reach the client; node:http parses that answer and its framing (Content-Length,
 * chunked), and on a 101 hands over the raw socket with the bytes it read past the head. An upgraded
 * connection leaves any pool anyway, so a pooled one would buy nothing.
 */

const NOT_HTTP1: AttemptResult<never> = { ok: false, kind: "transport", stop: true };

/** The backend's answer to one handshake: a 101 with its socket, or any other response to relay. */
export interface HandshakeAnswer {
  readonly backend: Backend;
  readonly response: IncomingMessage;
  readonly upgraded?: { readonly socket: Socket; readonly head: Buffer };
}

export class Handshake implements Attempts<HandshakeAnswer> {
  readonly method: string;
  readonly #path: string;
  readonly #headers: string[];
  readonly #policy: PolicyDeps;
  readonly #deadline: number;
  #clientGone = false;
  #current: CuttableAttempt | undefined;

  constructor(client: Socket, method: string, path: string, headers: string[], policy: PolicyDeps) {
    this.method = method;
    this.#path = path;
    this.#headers = headers;
    this.#policy = policy;
    this.#deadline = Date.now() + policy.settings.totalTimeoutMs;
    client.once("close", () => {
      this.#clientGone = true;
      this.#current?.cut("client-gone");
    });
  }

  /** There is no body to send again. */
  canResend(): boolean {
    return true;
  }

  attempt(backend: Backend): Promise<AttemptResult<HandshakeAnswer>> {
    const remaining = this.#deadline - Date.now();
    const refused = refusedAttempt(this.#clientGone, remaining);
    if (refused) return Promise.resolve(refused);
    // An HTTP/1.1 upgrade cannot go to a backend that speaks only HTTP/2 (docs/design.md, router rule 7): 502.
    if (backend.protocol === "h2c") return Promise.resolve(NOT_HTTP1);
    const policy = this.#policy;
    return new Promise((resolve) => {
      let settled = false;
      let connected = false;
      const settle = (result: AttemptResult<HandshakeAnswer>) => {
        settled = true;
        timer.cancel();
        this.#current = undefined;
        resolve(result);
      };
      // Another backend is tried only when nothing reached this one (a refused or timed-out connect).
      const fail = (cause: AbortCause | undefined, error: unknown) =>
        settle(upgradeFailure(failedAttempt(backend, cause, error, policy), connected));
      const upstream = httpRequest({
        host: backend.ip,
        port: backend.port,
        method: this.method,
        path: this.#path,
        headers: this.#headers,
        setHost: false,
        agent: false,
      });
      const attempt: CuttableAttempt = {
        cut(cause) {
          if (settled) return;
          fail(cause, new Error(`upgrade attempt cut: ${cause}`));
          upstream.destroy();
        },
      };
      this.#current = attempt;
      // One timer bounds connect plus the wait for the answer's head.
      const timer = armAttemptTimer(attempt, remaining, policy.settings.tryTimeoutMs);
      upstream.once("socket", (socket) =>
        socket.once("connect", () => {
          connected = true;
        }),
      );
      upstream.on("error", (error) => {
        if (!settled) fail(undefined, error);
      });
      upstream.once("upgrade", (response: IncomingMessage, socket: Socket, head: Buffer) => {
        // node:http dropped its own listeners from the socket when it handed it over.
        socket.on("error", (error) => policy.logger.debug("upgrade backend connection error", { error }));
        if (settled) {
          socket.destroy();
          return;
        }
        noteAnswer(backend, 101, policy);
        settle({ ok: true, value: { backend, response, upgraded: { socket, head } } });
      });
      upstream.once("response", (response: IncomingMessage) => {
        if (settled) {
          response.destroy();
          return;
        }
        noteAnswer(backend, response.statusCode ?? 0, policy);
        settle({ ok: true, value: { backend, response } });
      });
      upstream.end();
    });
  }
}

import { errorResponse } from "../core/errors.js";
import { downstreamResponseHeaders } from "../core/headers.js";
import {
  type AbortCause,
  type AttemptResult,
  abortedBeforeAttempt,
  noteAnswer,
  type PolicyDeps,
  upgradeFailure,
  withRetries,
} from "../core/proxy-policy.js";
import type { Backend, Selection } from "../core/select.js";
import { failedAttempt } from "../transports/connect-errors.js";
import type { Upstream } from "../transports/upstream.js";

export interface ProxyDeps extends PolicyDeps {
  readonly upstream: Upstream;
}

export interface ProxyRequest {
  readonly method: string;
  /** Origin-form path and query of the routed request. */
  readonly path: string;
  /** Already cleaned (core/headers.ts). */
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal | undefined;
  /** A WebSocket handshake: tried on another backend only when the connect failed (nothing reached it). */
  readonly upgrade?: boolean;
}

/** Request body bytes kept while streaming so that a retry can resend them; larger bodies are not retried. */
export const MAX_REPLAYABLE_BODY_BYTES = 64 * 1024;

class AbortReason extends Error {
  constructor(readonly kind: AbortCause) {
    super(kind);
  }
}

/**
 * The web path's proxy (Workers, a custom transport on Node, and the app tests): the shared policy
 * (core/proxy-policy.ts) over an Upstream that speaks web Request/Response. Never follows redirects: the
 * backend's response, 3xx included, streams back as is.
 */
export async function proxy(selection: Selection, request: ProxyRequest, deps: ProxyDeps): Promise<Response> {
  const body = requestBody(request);
  const whole = new AbortController();
  const totalTimer = setTimeout(
    () => whole.abort(new AbortReason("total-timeout")),
    deps.settings.totalTimeoutMs,
  );
  const onClientGone = () => whole.abort(new AbortReason("client-gone"));
  request.signal?.addEventListener("abort", onClientGone, { once: true });
  try {
    const result = await withRetries(
      selection,
      {
        method: request.method,
        canResend: body.canResend,
        attempt: (backend) => attemptOnce(backend, request, body, whole.signal, deps),
      },
      deps,
    );
    return result.ok ? result.value : errorResponse(result.error);
  } finally {
    clearTimeout(totalTimer);
    request.signal?.removeEventListener("abort", onClientGone);
  }
}

async function attemptOnce(
  backend: Backend,
  request: ProxyRequest,
  body: RequestBody,
  whole: AbortSignal,
  deps: ProxyDeps,
): Promise<AttemptResult<Response>> {
  if (whole.aborted) return abortedBeforeAttempt(causeOf(whole.reason) ?? "total-timeout");
  const attempt = new AbortController();
  const onWholeAbort = () => attempt.abort(whole.reason);
  whole.addEventListener("abort", onWholeAbort, { once: true });
  const tryTimer = setTimeout(
    () => attempt.abort(new AbortReason("try-timeout")),
    deps.settings.tryTimeoutMs,
  );
  try {
    const response = await deps.upstream.send({
      target: { ip: backend.ip, port: backend.port },
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: body.forAttempt(),
      signal: attempt.signal,
    });
    noteAnswer(backend, response.status, deps);
    // A 101 carries its WebSocket on the Response itself (Workers), which a copy would lose.
    if (response.status === 101) return { ok: true, value: response };
    return {
      ok: true,
      value: new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers: downstreamResponseHeaders(response.headers),
      }),
    };
  } catch (error) {
    const cause = attempt.signal.aborted ? causeOf(attempt.signal.reason) : undefined;
    const failure = failedAttempt(backend, cause, error, deps);
    return request.upgrade ? upgradeFailure(failure, failure.kind !== "connect") : failure;
  } finally {
    clearTimeout(tryTimer);
    whole.removeEventListener("abort", onWholeAbort);
  }
}

function causeOf(reason: unknown): AbortCause | undefined {
  return reason instanceof AbortReason ? reason.kind : undefined;
}

interface RequestBody {
  /** The body to hand to one attempt. */
  forAttempt(): ReadableStream<Uint8Array> | null;
  /** The whole body can still be sent again (nothing read yet, or everything read is still held). */
  canResend(): boolean;
}

const NO_BODY: RequestBody = { forAttempt: () => null, canResend: () => true };

function requestBody(request: ProxyRequest): RequestBody {
  if (request.body === null || request.method === "GET" || request.method === "HEAD") return NO_BODY;
  return streamedBody(request.body);
}

/**
 * Streams the client's body to each attempt, never waiting for it to end. The first
 * MAX_REPLAYABLE_BODY_BYTES read are kept (as references to the chunks, no copy): a transport may read
 * ahead before it connects (Node's fetch does), so after a failed attempt the next one replays the kept
 * prefix and continues from the client's stream. Past that size the body can no longer be resent.
 */
function streamedBody(source: ReadableStream<Uint8Array>): RequestBody {
  const reader = source.getReader();
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let overflowed = false;
  let sourceDone = false;
  return {
    canResend: () => !overflowed,
    forAttempt: () => {
      let replayed = 0;
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const replay = overflowed ? undefined : kept[replayed];
            if (replay) {
              replayed++;
              controller.enqueue(replay);
              return;
            }
            if (sourceDone) return controller.close();
            const { done, value } = await reader.read();
            if (done) {
              sourceDone = true;
              return controller.close();
            }
            if (!overflowed) {
              keptBytes += value.byteLength;
              if (keptBytes <= MAX_REPLAYABLE_BODY_BYTES) {
                kept.push(value);
                replayed++;
              } else {
                overflowed = true;
                kept.length = 0;
              }
            }
            controller.enqueue(value);
          },
          cancel(reason) {
            // A failed attempt cancels its stream; the client's stream stays readable for the next one.
            if (overflowed) return reader.cancel(reason);
          },
        },
        // highWaterMark 0: nothing is read from the client before the transport asks for it.
        { highWaterMark: 0 },
      );
    },
  };
}

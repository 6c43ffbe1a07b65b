import type { CompiledModifier } from "../core/filters.js";
import { downstreamResponseHeaders, reasonPhrase } from "../core/headers.js";
import {
  type AbortCause,
  type AttemptResult,
  abortedBeforeAttempt,
  MAX_REPLAYABLE_BODY_BYTES,
  noteAnswer,
  type PolicyDeps,
  type ProxyResult,
  upgradeFailure,
} from "../core/proxy-policy.js";
import { REQUEST_ID_HEADER } from "../core/request-id.js";
import type { RequestObservation } from "../core/request-observation.js";
import { forbidsContentLength, isFinalStatus } from "../core/response-status.js";
import { withRetries } from "../core/retry-loop.js";
import type { Backend, Selection } from "../core/selection.js";
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
  /** Metrics and access log of this request (core/request-observation.ts). */
  readonly observation?: RequestObservation;
  /** The route's ResponseHeaderModifier (core/filters.ts). */
  readonly responseHeaders?: CompiledModifier | undefined;
}

class AbortReason extends Error {
  constructor(readonly kind: AbortCause) {
    super(kind);
  }
}

/** A backend's answer with a status no final answer may have (core/response-status.ts). */
class InvalidStatusError extends Error {
  override readonly name = "InvalidStatusError";
  constructor(readonly status: number) {
    super(`backend answered with status ${status}, which no final answer has (RFC 9110 §15)`);
  }
}

/**
 * The web path's proxy (Workers, a custom transport on Node, and the app tests): the shared policy
 * (core/proxy-policy.ts) over an Upstream that speaks web Request/Response. Never follows redirects: the
 * backend's response, 3xx included, streams back as is. Timeouts follow Envoy's model as on Node
 * (node/proxy.ts): the per-try and total clocks start once the whole request was sent; while a body streams,
 * a client that stalls is answered 408 and a backend that stops taking it gets a try timeout.
 */
export async function proxy(
  selection: Selection,
  request: ProxyRequest,
  deps: ProxyDeps,
): Promise<ProxyResult<Response>> {
  const body = requestBody(request);
  const whole = new AbortController();
  let totalTimer: ReturnType<typeof setTimeout> | undefined;
  const startTotal = () => {
    totalTimer ??= setTimeout(
      () => whole.abort(new AbortReason("total-timeout")),
      deps.settings.totalTimeoutMs,
    );
  };
  if (body === NO_BODY) startTotal();
  const onClientGone = () => whole.abort(new AbortReason("client-gone"));
  request.signal?.addEventListener("abort", onClientGone, { once: true });
  try {
    return await withRetries(
      selection,
      {
        method: request.method,
        canResend: body.canResend,
        attempt: (backend) => attemptOnce(backend, request, body, { signal: whole.signal, startTotal }, deps),
      },
      deps,
      request.observation,
    );
  } finally {
    clearTimeout(totalTimer);
    request.signal?.removeEventListener("abort", onClientGone);
  }
}

const H2C_UNREACHABLE: AttemptResult<never> = { ok: false, kind: "transport", stop: true };

async function attemptOnce(
  backend: Backend,
  request: ProxyRequest,
  body: RequestBody,
  whole: { readonly signal: AbortSignal; startTotal(): void },
  deps: ProxyDeps,
): Promise<AttemptResult<Response>> {
  if (whole.signal.aborted) return abortedBeforeAttempt(causeOf(whole.signal.reason) ?? "total-timeout");
  // The web transports (fetch, undici) speak HTTP/1.1 to backends: an h2c backend would read garbage. Only
  // Node's own path speaks h2c (node/h2-upstream/); here it is a 502, never the wrong protocol.
  if (backend.protocol === "h2c") return H2C_UNREACHABLE;
  const attempt = new AbortController();
  const onWholeAbort = () => attempt.abort(whole.signal.reason);
  whole.signal.addEventListener("abort", onWholeAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let answered = false;
  const arm = (ms: number, cause: AbortCause) => {
    // Once the head is in, the body may go on streaming both ways: no attempt timer may cut it.
    if (answered) return;
    clearTimeout(timer);
    timer = setTimeout(() => attempt.abort(new AbortReason(cause)), ms);
  };
  const tryTimeout = () => arm(deps.settings.tryTimeoutMs, "try-timeout");
  const stream = body.forAttempt({
    waitingOnClient: () => arm(deps.settings.clientBodyIdleTimeoutMs, "client-stalled"),
    waitingOnBackend: tryTimeout,
    sent: () => {
      whole.startTotal();
      tryTimeout();
    },
  });
  // Without a body the request is sent at once; with one, until it is read the backend is connecting.
  tryTimeout();
  try {
    const response = await deps.upstream.send({
      target: { ip: backend.ip, port: backend.port },
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: stream,
      signal: attempt.signal,
    });
    if (!isFinalStatus(response.status, request.upgrade === true)) {
      response.body?.cancel().catch(() => undefined);
      throw new InvalidStatusError(response.status);
    }
    answered = true;
    clearTimeout(timer);
    noteAnswer(backend, response.status, deps);
    request.observation?.respond(deps.metrics, response.status, performance.now(), true);
    // A 101 carries its WebSocket on the Response itself (Workers), which a copy would lose.
    if (response.status === 101) return { ok: true, value: response };
    const headers = downstreamResponseHeaders(response.headers, request.responseHeaders);
    if (forbidsContentLength(response.status)) headers.delete("content-length");
    if (request.observation) headers.set(REQUEST_ID_HEADER, request.observation.requestId);
    return {
      ok: true,
      value: new Response(response.body, {
        status: response.status,
        // A reason phrase the Response constructor would refuse (UTF-8 decoded past Latin-1) is left out.
        statusText: reasonPhrase(response.statusText) ?? "",
        headers,
      }),
    };
  } catch (error) {
    const cause = attempt.signal.aborted ? causeOf(attempt.signal.reason) : undefined;
    const failure = failedAttempt(backend, cause, error, deps);
    return request.upgrade ? upgradeFailure(failure, failure.kind !== "connect") : failure;
  } finally {
    clearTimeout(timer);
    whole.signal.removeEventListener("abort", onWholeAbort);
  }
}

function causeOf(reason: unknown): AbortCause | undefined {
  return reason instanceof AbortReason ? reason.kind : undefined;
}

/** What the body tells its attempt about who holds the upload up. */
interface BodyWatch {
  /** The transport asked for more and the client has not sent it yet. */
  waitingOnClient(): void;
  /** A chunk was handed over and the transport has not asked for the next yet. */
  waitingOnBackend(): void;
  /** The whole body was handed over. */
  sent(): void;
}

interface RequestBody {
  /** The body to hand to one attempt. */
  forAttempt(watch: BodyWatch): ReadableStream<Uint8Array> | null;
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
    forAttempt: (watch) => {
      let replayed = 0;
      const close = (controller: ReadableStreamDefaultController<Uint8Array>) => {
        controller.close();
        watch.sent();
      };
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const replay = overflowed ? undefined : kept[replayed];
            if (replay) {
              replayed++;
              controller.enqueue(replay);
              watch.waitingOnBackend();
              return;
            }
            if (sourceDone) return close(controller);
            watch.waitingOnClient();
            const { done, value } = await reader.read();
            if (done) {
              sourceDone = true;
              return close(controller);
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
            watch.waitingOnBackend();
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

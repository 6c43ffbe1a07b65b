import type { CompiledModifier } from "../../store/filters/header-modifier.js";
import {
  type AbortCause,
  ANSWER_RETRIED,
  type AnswerRetried,
  type AnswerRetries,
  type AttemptResult,
  abortedBeforeAttempt,
  noteAnswer,
  type PolicyDeps,
  type ProxyResult,
  type ProxySettings,
  upgradeFailure,
} from "../core/forwarding/proxy-policy.js";
import { withRetries } from "../core/forwarding/retry-loop.js";
import { downstreamResponseHeaders, reasonPhrase } from "../core/http/headers.js";
import { REQUEST_ID_HEADER } from "../core/http/request-id.js";
import { forbidsContentLength, isFinalStatus } from "../core/http/response-status.js";
import type { RequestObservation } from "../core/observability/request-observation.js";
import type { Backend, Selection } from "../core/selection/selection.js";
import { failedAttempt } from "../transports/connect-errors.js";
import type { Upstream } from "../transports/upstream.js";
import { type BodyWatch, NO_BODY, type RequestBody, requestBody } from "./web-request-body.js";

export interface ProxyDeps extends PolicyDeps {
  readonly upstream: Upstream;
}

export interface ProxyRequest {
  readonly method: string;
  /** Origin-form path and query of the routed request. */
  readonly path: string;
  /** Already cleaned (core/http/headers.ts). */
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal | undefined;
  /** A WebSocket handshake: tried on another backend only when the connect failed (nothing reached it). */
  readonly upgrade?: boolean;
  /** Metrics and access log of this request (core/observability/request-observation.ts). */
  readonly observation?: RequestObservation;
  /** The route's ResponseHeaderModifier (core/forwarding/filters.ts). */
  readonly responseHeaders?: CompiledModifier | undefined;
}

class AbortReason extends Error {
  constructor(readonly kind: AbortCause) {
    super(kind);
  }
}

/** A backend's answer with a status no final answer may have (core/http/response-status.ts). */
class InvalidStatusError extends Error {
  override readonly name = "InvalidStatusError";
  constructor(readonly status: number) {
    super(`backend answered with status ${status}, which no final answer has (RFC 9110 §15)`);
  }
}

/**
 * The web path's proxy (Workers, a custom transport on Node, and the app tests): the shared policy
 * (core/forwarding/proxy-policy.ts) over an Upstream that speaks web Request/Response. Never follows redirects: the
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
  let deadline: number | undefined;
  const startTotal = () => {
    deadline ??= Date.now() + deps.settings.totalTimeoutMs;
    totalTimer ??= setTimeout(
      () => whole.abort(new AbortReason("total-timeout")),
      deps.settings.totalTimeoutMs,
    );
  };
  const remainingMs = () => (deadline === undefined ? deps.settings.totalTimeoutMs : deadline - Date.now());
  if (body === NO_BODY) startTotal();
  const onClientGone = () => whole.abort(new AbortReason("client-gone"));
  request.signal?.addEventListener("abort", onClientGone, { once: true });
  try {
    return await withRetries(
      selection,
      {
        method: request.method,
        canResend: body.canResend,
        attempt: (backend, answers) =>
          attemptOnce(
            backend,
            request,
            body,
            { signal: whole.signal, startTotal, remainingMs, answers },
            deps,
          ),
        wait: (ms) => cutShort(ms, whole.signal),
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

/** What an attempt shares with its request: the request's cut, its clock, and the retry loop. */
interface WholeRequest {
  readonly signal: AbortSignal;
  startTotal(): void;
  remainingMs(): number;
  readonly answers: AnswerRetries;
}

/**
 * One attempt's cut (the request's, or its own timer's) and the one timer that bounds it: the per-try timeout
 * while the backend is connecting or taking the body, the client's idle timeout while it is slow to send it.
 */
class WebAttempt implements BodyWatch {
  readonly #controller = new AbortController();
  readonly #whole: WholeRequest;
  readonly #settings: ProxySettings;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #answered = false;
  readonly #onWholeAbort = () => this.#controller.abort(this.#whole.signal.reason);

  constructor(whole: WholeRequest, settings: ProxySettings) {
    this.#whole = whole;
    this.#settings = settings;
    whole.signal.addEventListener("abort", this.#onWholeAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the router cut the attempt, when it did. */
  get cause(): AbortCause | undefined {
    return this.signal.aborted ? causeOf(this.signal.reason) : undefined;
  }

  waitingOnClient(): void {
    this.#arm(this.#settings.clientBodyIdleTimeoutMs, "client-stalled");
  }
  waitingOnBackend(): void {
    this.#arm(this.#settings.tryTimeoutMs, "try-timeout");
  }
  sent(): void {
    this.#whole.startTotal();
    this.waitingOnBackend();
  }

  /** The head is in: the body may go on streaming both ways, and no attempt timer may cut it. */
  answered(): void {
    this.#answered = true;
    clearTimeout(this.#timer);
  }

  finish(): void {
    clearTimeout(this.#timer);
    this.#whole.signal.removeEventListener("abort", this.#onWholeAbort);
  }

  #arm(ms: number, cause: AbortCause): void {
    if (this.#answered) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#controller.abort(new AbortReason(cause)), ms);
  }
}

async function attemptOnce(
  backend: Backend,
  request: ProxyRequest,
  body: RequestBody,
  whole: WholeRequest,
  deps: ProxyDeps,
): Promise<AttemptResult<Response> | AnswerRetried> {
  if (whole.signal.aborted) return abortedBeforeAttempt(causeOf(whole.signal.reason) ?? "total-timeout");
  // The web transport (fetch) speaks HTTP/1.1 to backends: an h2c backend would read garbage. Only
  // Node's own path speaks h2c (node/h2c/); here it is a 502, never the wrong protocol.
  if (backend.protocol === "h2c") return H2C_UNREACHABLE;
  const attempt = new WebAttempt(whole, deps.settings);
  const stream = body.forAttempt(attempt);
  // Without a body the request is sent at once; with one, until it is read the backend is connecting.
  attempt.waitingOnBackend();
  try {
    const response = await deps.upstream.send({
      target: { ip: backend.ip, port: backend.port },
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: stream,
      signal: attempt.signal,
    });
    return answerOf(response, backend, request, body, whole, attempt, deps);
  } catch (error) {
    const failure = failedAttempt(backend, attempt.cause, error, deps);
    return request.upgrade ? upgradeFailure(failure, failure.kind !== "connect") : failure;
  } finally {
    attempt.finish();
  }
}

/** The backend's answer as the client gets it, or dropped for a rule's retry; throws when it is no final one. */
function answerOf(
  response: Response,
  backend: Backend,
  request: ProxyRequest,
  body: RequestBody,
  whole: WholeRequest,
  attempt: WebAttempt,
  deps: ProxyDeps,
): AttemptResult<Response> | AnswerRetried {
  if (!isFinalStatus(response.status, request.upgrade === true)) {
    response.body?.cancel().catch(() => undefined);
    throw new InvalidStatusError(response.status);
  }
  // A rule's retry (HTTPRouteRetry) drops this answer for another attempt; an upgrade is never sent twice.
  if (!request.upgrade && whole.answers.retriesAnswer(backend, response.status, body, whole.remainingMs())) {
    noteAnswer(backend, response.status, deps);
    response.body?.cancel().catch(() => undefined);
    return ANSWER_RETRIED;
  }
  attempt.answered();
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
}

/** Resolves after `ms`, or as soon as `signal` aborts (the client left, the request's time ran out). */
function cutShort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

function causeOf(reason: unknown): AbortCause | undefined {
  return reason instanceof AbortReason ? reason.kind : undefined;
}

import type { Logger } from "../contract/logger.js";
import type { Balancer } from "./balancer.js";
import type { PassiveEjection } from "./ejection.js";
import { errorResponse } from "./errors.js";
import { downstreamResponseHeaders } from "./headers.js";
import type { RouterMetrics, UpstreamErrorKind } from "./metrics.js";
import type { Backend, Selection } from "./select.js";
import { type Upstream, UpstreamConnectError } from "./upstream.js";

export interface ProxySettings {
  /** Per attempt: connect plus time to response headers. */
  readonly tryTimeoutMs: number;
  /** Whole request across retries, until response headers. */
  readonly totalTimeoutMs: number;
  /** Further attempts on other backends. */
  readonly retries: number;
}

export interface ProxyDeps {
  readonly upstream: Upstream;
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly settings: ProxySettings;
}

export interface ProxyRequest {
  readonly method: string;
  /** Origin-form path and query of the routed request. */
  readonly path: string;
  /** Already cleaned (headers.ts). */
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal | undefined;
}

/** RFC 9110 §9.2.2: repeating these has the same effect as sending them once. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** Request body bytes kept while streaming so that a retry can resend them; larger bodies are not retried. */
export const MAX_REPLAYABLE_BODY_BYTES = 64 * 1024;

/** 502/503/504 from a backend count as its failure for ejection (a gateway-failure detector). */
const GATEWAY_FAILURE = new Set([502, 503, 504]);

class AbortReason extends Error {
  constructor(readonly kind: "try-timeout" | "total-timeout" | "client-gone") {
    super(kind);
  }
}

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/**
 * Sends the request to one backend of the first tier that has a usable one, retrying on another backend
 * after a failure when that is safe: any method when nothing reached the backend (connect error and the
 * body untouched), idempotent methods otherwise when the body can be replayed. Never follows redirects:
 * the backend's response, 3xx included, streams back as is.
 */
export async function proxy(selection: Selection, request: ProxyRequest, deps: ProxyDeps): Promise<Response> {
  const { settings, metrics } = deps;
  const idempotent = IDEMPOTENT.has(request.method);
  const body = requestBody(request);
  const whole = new AbortController();
  const totalTimer = setTimeout(() => whole.abort(new AbortReason("total-timeout")), settings.totalTimeoutMs);
  const onClientGone = () => whole.abort(new AbortReason("client-gone"));
  request.signal?.addEventListener("abort", onClientGone, { once: true });
  let tried: Set<string> | undefined;
  let lastFailure: "timeout" | "error" = "error";
  try {
    for (let attempt = 0; attempt <= settings.retries; attempt++) {
      const backend = pickBackend(selection, deps, tried);
      if (!backend) break;
      if (attempt > 0) metrics.retries++;
      const outcome = await attemptOnce(backend, request, body, whole.signal, deps);
      if (outcome.response) return outcome.response;
      lastFailure = outcome.kind === "timeout" ? "timeout" : "error";
      if (outcome.stop) break;
      // Nothing reached the backend on a connect error: any method may go elsewhere. Otherwise only an
      // idempotent one (RFC 9110 §9.2.2), and only while its body can be sent again in full.
      const retriable = body.canResend() && (outcome.kind === "connect" || idempotent);
      if (!retriable) break;
      tried ??= new Set();
      tried.add(backend.address);
    }
    return errorResponse(lastFailure === "timeout" ? "upstream_timeout" : "bad_gateway");
  } finally {
    clearTimeout(totalTimer);
    request.signal?.removeEventListener("abort", onClientGone);
  }
}

type AttemptOutcome =
  | { response: Response; kind?: undefined; stop?: undefined }
  | { response?: undefined; kind: UpstreamErrorKind | "client"; stop: boolean };

async function attemptOnce(
  backend: Backend,
  request: ProxyRequest,
  body: RequestBody,
  whole: AbortSignal,
  deps: ProxyDeps,
): Promise<AttemptOutcome> {
  const { balancer, ejection, metrics, logger, settings } = deps;
  if (whole.aborted) return abortedOutcome(whole.reason);
  const attempt = new AbortController();
  const onWholeAbort = () => attempt.abort(whole.reason);
  whole.addEventListener("abort", onWholeAbort, { once: true });
  const tryTimer = setTimeout(() => attempt.abort(new AbortReason("try-timeout")), settings.tryTimeoutMs);
  balancer.acquire(backend.address);
  try {
    const response = await deps.upstream.send({
      target: { ip: backend.ip, port: backend.port },
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: body.forAttempt(),
      signal: attempt.signal,
    });
    if (GATEWAY_FAILURE.has(response.status)) noteFailure(backend, deps);
    else ejection.recordSuccess(backend.address);
    return {
      response: new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers: downstreamResponseHeaders(response.headers),
      }),
    };
  } catch (error) {
    const reason: unknown = attempt.signal.aborted ? attempt.signal.reason : undefined;
    if (reason instanceof AbortReason) {
      if (reason.kind === "client-gone") return { kind: "client", stop: true };
      metrics.upstreamErrors.timeout++;
      noteFailure(backend, deps);
      logger.debug("upstream attempt timed out", { backend: backend.address, limit: reason.kind });
      return { kind: "timeout", stop: reason.kind === "total-timeout" };
    }
    const kind: UpstreamErrorKind = error instanceof UpstreamConnectError ? "connect" : "transport";
    metrics.upstreamErrors[kind]++;
    noteFailure(backend, deps);
    logger.debug("upstream attempt failed", { backend: backend.address, kind, error });
    return { kind, stop: false };
  } finally {
    clearTimeout(tryTimer);
    whole.removeEventListener("abort", onWholeAbort);
    // In flight means "waiting for response headers": cheap to track and what p2c needs to steer
    // away from slow backends; long response bodies are not counted.
    balancer.release(backend.address);
  }
}

function abortedOutcome(reason: unknown): AttemptOutcome {
  if (reason instanceof AbortReason && reason.kind === "client-gone") return { kind: "client", stop: true };
  return { kind: "timeout", stop: true };
}

function noteFailure(backend: Backend, deps: ProxyDeps): void {
  const ejected = deps.ejection.recordFailure(backend.address);
  if (ejected) {
    deps.metrics.ejections++;
    deps.logger.warn("backend ejected", {
      backend: backend.address,
      cluster: backend.cluster,
      durationMs: ejected.durationMs,
      ejections: ejected.ejections,
    });
  }
}

/** First tier with a backend that is neither ejected (within the cap) nor already tried. */
export function pickBackend(
  selection: Selection,
  deps: Pick<ProxyDeps, "balancer" | "ejection">,
  tried: ReadonlySet<string> | undefined,
): Backend | undefined {
  const excluded = deps.ejection.excluded(selection.addresses);
  const skip = mergeSkip(excluded, tried);
  for (const tier of selection.tiers) {
    const backend = deps.balancer.pick(tier.backends, skip);
    if (backend) return backend;
  }
  return undefined;
}

function mergeSkip(a: ReadonlySet<string>, b: ReadonlySet<string> | undefined): ReadonlySet<string> {
  if (!b || b.size === 0) return a;
  if (a.size === 0) return b;
  return new Set([...a, ...b]);
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

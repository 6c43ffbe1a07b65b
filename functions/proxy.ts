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
  /** Content-Length of the client's request, when it sent one. */
  readonly contentLength: number | undefined;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal | undefined;
}

/** RFC 9110 §9.2.2: repeating these has the same effect as sending them once. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/**
 * Idempotent requests with a body up to this size and a Content-Length are read into memory so they can
 * be replayed on another backend; larger or chunked bodies stream and are never replayed once read.
 */
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
  const body = await prepareBody(request, idempotent);
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
      const retriable =
        outcome.kind === "connect"
          ? !body.started()
          : idempotent && body.replayable && outcome.kind !== "client";
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
  readonly replayable: boolean;
  /** The body to hand to one attempt. */
  forAttempt(): ReadableStream<Uint8Array> | null;
  /** True once any byte of a streamed body was read: it cannot be sent again. */
  started(): boolean;
}

const NO_BODY: RequestBody = { replayable: true, forAttempt: () => null, started: () => false };

async function prepareBody(request: ProxyRequest, idempotent: boolean): Promise<RequestBody> {
  const source = request.body;
  if (source === null || request.method === "GET" || request.method === "HEAD") return NO_BODY;
  const length = request.contentLength;
  if (idempotent && length !== undefined && length <= MAX_REPLAYABLE_BODY_BYTES) {
    const bytes = new Uint8Array(await new Response(source).arrayBuffer());
    return {
      replayable: true,
      forAttempt: () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            if (bytes.byteLength > 0) controller.enqueue(bytes);
            controller.close();
          },
        }),
      started: () => false,
    };
  }
  return streamedBody(source);
}

/**
 * Hands each attempt a thin stream over the client's body. Until an attempt pulls the first chunk,
 * the client's stream is untouched, so a connect failure can still move the request to another backend.
 */
function streamedBody(source: ReadableStream<Uint8Array>): RequestBody {
  const reader = source.getReader();
  let started = false;
  return {
    replayable: false,
    started: () => started,
    forAttempt: () =>
      new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            started = true;
            const { done, value } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
          cancel(reason) {
            if (started) return reader.cancel(reason);
          },
          // highWaterMark 0: nothing is read from the client before the transport asks for it.
        },
        { highWaterMark: 0 },
      ),
  };
}

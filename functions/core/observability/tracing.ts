import type { TraceIds } from "../http/trace-context.js";
import type { Backend } from "../selection/selection.js";
import type { AttemptOutcome } from "./request-metrics.js";

/**
 * Tracing as every request path sees it: a span per request and per upstream attempt (node/tracing/ exports
 * them over OTLP when OTEL_* says so), and W3C trace context propagated whether or not spans are exported.
 * With tracing off a request costs no allocation here: `start` hands back one shared object.
 */

/** What core/http/headers.ts sends as `traceparent` and `tracestate` (ForwardingInfo.trace). */
export interface TraceFields {
  /** The router's own span context (tracing on); undefined: the client's valid traceparent goes on unchanged. */
  readonly traceparent?: string | undefined;
  /** A fresh traceparent when the client sent no valid one (and the router has no span of its own). */
  newTraceparent(): string;
}

/** One traced request; its methods are told the request's progress by core/observability/request-observation.ts. */
export interface RequestSpan {
  /** This span's context as a traceparent: the parent of what the backend records. */
  readonly traceparent: string;
  /** A route matched: the route's id and rule index (undefined for the router's own answers), its Service. */
  routed(route: string | undefined, rule: number | undefined, service: string): void;
  /** An attempt leaves for `backend`; `retry` is 0 for the first. */
  attempt(backend: Backend, retry: number): void;
  /** The current attempt ended: `status` of the backend's answer head, 0 without one. */
  attemptEnded(outcome: AttemptOutcome, status: number): void;
  /** The request ended (its response's last byte, or the client gone: 499). Once. */
  end(status: number, cluster: string): void;
}

/** How a request starts: what the span is named and labelled with. */
export interface TracedRequest {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly scheme: "http" | "https";
  /** "1.1", "2.0"; undefined where the runtime does not say. */
  readonly protocol: string | undefined;
  readonly client: string | undefined;
}

export interface RequestTraceStart {
  readonly fields: TraceFields;
  readonly span: RequestSpan | undefined;
}

export interface RequestTracing {
  /** Whether spans are made at all (OTEL_EXPORTER_OTLP_ENDPOINT and friends). */
  readonly enabled: boolean;
  /** A request's start while tracing is off: one shared object, so a path checks `enabled` and builds nothing. */
  readonly untraced: RequestTraceStart;
  /**
   * The request's span and the fields to send upstream; `header` reads the client's traceparent and tracestate,
   * the span's parent.
   */
  start(request: TracedRequest, header: (name: string) => string | null | undefined): RequestTraceStart;
}

/** No spans; W3C trace context still propagated (a new trace id when the client sent none). */
export function propagationOnly(ids: TraceIds): RequestTracing {
  const untraced: RequestTraceStart = {
    fields: { newTraceparent: () => ids.newTraceparent() },
    span: undefined,
  };
  return { enabled: false, untraced, start: () => untraced };
}

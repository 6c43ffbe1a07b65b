import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  formatTraceparent,
  isValidTracestate,
  parseTraceparent,
  type TraceIds,
} from "../../core/http/trace-context.js";
import type { AttemptOutcome } from "../../core/observability/request-metrics.js";
import type {
  RequestSpan,
  RequestTraceStart,
  RequestTracing,
  TracedRequest,
} from "../../core/observability/tracing.js";
import type { Backend } from "../../core/selection/selection.js";
import type { TracingSettings } from "../../core/settings/config.js";

/**
 * Spans over OTLP/HTTP with the OpenTelemetry JS SDK: a server span per request, a client span per upstream
 * attempt under it. The URL, service name and sampler come from the router's settings (core/settings/config.ts); the SDK
 * reads the rest of the standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*,
 * OTEL_RESOURCE_ATTRIBUTES). Spans leave in batches, off the request path.
 */
export interface OtelTracing extends RequestTracing {
  /** Exports what is buffered and stops (the router's close). */
  shutdown(): Promise<void>;
}

export function createOtelTracing(settings: TracingSettings, ids: TraceIds): OtelTracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": settings.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }))],
  });
  const tracer = provider.getTracer("edgeslice-router");
  const untraced: RequestTraceStart = {
    fields: { newTraceparent: () => ids.newTraceparent() },
    span: undefined,
  };
  return {
    enabled: true,
    untraced,
    start(request, header) {
      const span = new OtelRequestSpan(tracer, request, header);
      return {
        fields: { traceparent: span.traceparent, newTraceparent: untraced.fields.newTraceparent },
        span,
      };
    },
    shutdown: () => provider.shutdown(),
  };
}

/** OTEL_TRACES_SAMPLER as OpenTelemetry's SDK configuration specification defines each value. */
function samplerOf({ sampler, ratio }: TracingSettings): Sampler {
  switch (sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The client's span context, when it sent a valid one (§3.2); its tracestate only when valid too. */
function parentContext(header: (name: string) => string | null | undefined) {
  const value = header("traceparent");
  const parent = value ? parseTraceparent(value) : undefined;
  if (!parent) return ROOT_CONTEXT;
  const state = header("tracestate");
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.parentId,
    traceFlags: parent.flags & 1,
    isRemote: true,
    ...(state && isValidTracestate(state) ? { traceState: new TraceState(state) } : {}),
  });
}

class OtelRequestSpan implements RequestSpan {
  readonly traceparent: string;
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #method: string;
  #attempt: Span | undefined;
  #context = ROOT_CONTEXT;
  #ended = false;

  constructor(tracer: Tracer, request: TracedRequest, header: (name: string) => string | null | undefined) {
    this.#tracer = tracer;
    this.#method = request.method;
    this.#span = tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          "url.scheme": request.scheme,
          "url.path": request.path,
          "server.address": request.host,
          ...(request.client ? { "client.address": request.client } : {}),
          ...(request.protocol ? { "network.protocol.version": request.protocol } : {}),
        },
      },
      parentContext(header),
    );
    const context = this.#span.spanContext();
    this.#context = trace.setSpan(ROOT_CONTEXT, this.#span);
    this.traceparent = formatTraceparent(context.traceId, context.spanId, (context.traceFlags & 1) === 1);
  }

  routed(route: string | undefined, rule: number | undefined, service: string): void {
    if (route !== undefined) {
      this.#span.updateName(`${this.#method} ${route}`);
      this.#span.setAttribute("http.route", route);
    }
    if (rule !== undefined) this.#span.setAttribute("edgeslice.route.rule", rule);
    this.#span.setAttribute("edgeslice.service", service);
  }

  attempt(backend: Backend, retry: number): void {
    this.#attempt?.end();
    this.#attempt = this.#tracer.startSpan(
      this.#method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "server.address": backend.ip,
          "server.port": backend.port,
          "edgeslice.cluster": backend.cluster,
          "http.request.resend_count": retry,
        },
      },
      this.#context,
    );
  }

  attemptEnded(outcome: AttemptOutcome, status: number): void {
    const span = this.#attempt;
    if (!span) return;
    this.#attempt = undefined;
    span.setAttribute("edgeslice.attempt.outcome", outcome);
    if (status !== 0) span.setAttribute("http.response.status_code", status);
    if (outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    span.end();
  }

  end(status: number, cluster: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#attempt?.end();
    this.#span.setAttribute("http.response.status_code", status);
    if (cluster !== "") this.#span.setAttribute("edgeslice.cluster", cluster);
    // Server spans: only a 5xx is the server's error (OpenTelemetry's HTTP semantic conventions).
    if (status >= 500) this.#span.setStatus({ code: SpanStatusCode.ERROR });
    this.#span.end();
  }
}

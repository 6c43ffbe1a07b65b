import * as v from "valibot";
import { booleanFromEnv, fractionFromEnv, optionalText } from "../../../lib/env.js";
import { BACKEND_SERIES } from "../observability/backend-metrics.js";

/** OpenTelemetry's OTEL_TRACES_SAMPLER values (its SDK configuration specification). */
export const TRACES_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

/** The router's logging settings (router-env.ts spreads them where they are listed in docs/configuration.md). */
export const LOGGING_ENV = {
  LOG_LEVEL: v.pipe(
    v.optional(
      v.picklist(["debug", "info", "warn", "error"], "LOG_LEVEL must be debug, info, warn or error"),
      "info",
    ),
    v.description("`debug`, `info`, `warn` or `error`; JSON lines on stdout (Workers: the console)"),
  ),
  ACCESS_LOG: v.pipe(
    booleanFromEnv(false),
    v.description("one JSON line per request on stdout ([access log](operations.md#observability))"),
  ),
  ACCESS_LOG_SAMPLE: v.pipe(
    fractionFromEnv(1),
    v.description("the fraction of requests the access log writes, 0 to 1, decided when a request arrives"),
  ),
};

/** Tracing (OpenTelemetry's standard variables) and the backend metrics' series. */
export const TELEMETRY_ENV = {
  OTEL_EXPORTER_OTLP_ENDPOINT: v.pipe(
    optionalText,
    v.description(
      "Node: export a span per request and per upstream attempt over OTLP/HTTP to this collector (`http://otel-collector:4318`; traces go to its `/v1/traces`); unset, no spans, while `traceparent` is still propagated ([tracing](operations.md#tracing)). The SDK reads the other standard `OTEL_EXPORTER_OTLP_*` and `OTEL_BSP_*` variables itself",
    ),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.pipe(
    optionalText,
    v.description("Node: the whole traces URL, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`"),
  ),
  OTEL_SERVICE_NAME: v.pipe(
    optionalText,
    v.metadata({ default: "`edgeslice-router`" }),
    v.description("Node: the `service.name` of the router's spans (`OTEL_RESOURCE_ATTRIBUTES` adds more)"),
  ),
  OTEL_TRACES_SAMPLER: v.pipe(
    v.optional(
      v.picklist(TRACES_SAMPLERS, `OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(", ")}`),
      "parentbased_always_on",
    ),
    v.description(
      "Node: which requests get spans (OpenTelemetry's samplers); the `traceidratio` ones take `OTEL_TRACES_SAMPLER_ARG`, a ratio 0 to 1",
    ),
  ),
  OTEL_TRACES_SAMPLER_ARG: v.pipe(
    optionalText,
    v.description("Node: the sampler's argument: the ratio of the `traceidratio` samplers (default 1)"),
  ),
  OTEL_SDK_DISABLED: v.pipe(booleanFromEnv(false), v.description("Node: `true` turns span export off")),
  METRICS_BACKENDS: v.pipe(
    v.optional(
      v.picklist(BACKEND_SERIES, `METRICS_BACKENDS must be one of ${BACKEND_SERIES.join(", ")}`),
      "service",
    ),
    v.description(
      "`edgeslice_backends` per Service and cluster (four series each), per `cluster` only, or `none`: for stores of many thousand Services ([metrics](operations.md#observability))",
    ),
  ),
};

import { ConfigurationError } from "../../../lib/configuration-error.js";
import { parseEnv } from "../../../lib/env.js";
import type { GeoPoint } from "../../../store/places.js";
import type { RecordBudget } from "../../../store/record-budget.js";
import { type RedisTarget, redisTargetOrThrow } from "../../../store/redis/target.js";
import type { SteeringPolicy } from "../../../store/steering.js";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "../http/trusted-proxies.js";
import type { AccessLogSettings } from "../observability/access-log.js";
import type { BackendSeries } from "../observability/backend-metrics.js";
import type { TlsPort } from "../tls/tls-ports.js";
import type { ClusterGrants } from "../trust/cluster-grants.js";
import type { ClusterPlaces } from "../trust/cluster-places.js";
import { type IpFamilyPolicy, RouterEnvSchema } from "./router-env.js";

export { IP_FAMILY_POLICIES, type IpFamilyPolicy, type RouterEnv, RouterEnvSchema } from "./router-env.js";

import type { TRACES_SAMPLERS } from "./observability-env.js";

/** The HTTPS listener's port when HTTPS_PORT is unset (unprivileged, as PORT's 8080). */
export const DEFAULT_HTTPS_PORT = 8443;

/** The admin listener's port when ADMIN_PORT is unset (Envoy's admin port). */
export const DEFAULT_ADMIN_PORT = 9901;

/** Span export (OTEL_*, router-env.ts). */
export interface TracingSettings {
  readonly serviceName: string;
  /** Where OTLP/HTTP posts spans. */
  readonly url: string;
  readonly sampler: (typeof TRACES_SAMPLERS)[number];
  /** OTEL_TRACES_SAMPLER_ARG of the traceidratio samplers, 0 to 1. */
  readonly ratio: number;
}

/** OpenTelemetry's rule: a ratio outside 0..1 or no number is 1 (its SDK configuration specification). */
function samplerRatio(text: string | undefined): number {
  const ratio = text === undefined ? 1 : Number(text);
  return Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
}

export interface RouterConfig {
  readonly redisUrl: string | undefined;
  /** From REDIS_URL and REDIS_CLUSTER; undefined when REDIS_URL is unset. */
  readonly redis: RedisTarget | undefined;
  readonly port: number;
  readonly host: string;
  /** ADMIN_PORT: where admin, metrics and the dashboard are served apart from the proxied traffic (Node). */
  readonly adminPort: number;
  /** ADMIN_HOST; undefined: the public listener's address. */
  readonly adminHost: string | undefined;
  /** HTTPS_PORT (Node): served only with a TLS store key; undefined where the runtime has no such listener. */
  readonly httpsPort?: number;
  /** HTTPS_LISTENER_PORTS (Node): more TLS ports, each serving one Gateway listener port. */
  readonly tlsListenerPorts?: readonly TlsPort[] | undefined;
  /** TLS_STORE_KEY, decoded (Node); undefined: no HTTPS listener, and the router says why once. */
  readonly tlsStoreKey?: Uint8Array | undefined;
  readonly prefix: string;
  readonly cluster: string | undefined;
  readonly zone: string | undefined;
  /** CLUSTER_GRANTS; undefined: any cluster may publish any host and backend address. */
  readonly clusterGrants: ClusterGrants | undefined;
  /** Span export over OTLP (Node): set when an OTLP endpoint is and the SDK is not disabled; absent: no spans. */
  readonly tracing?: TracingSettings | undefined;
  /** TRUSTED_PROXIES (Node); absent or empty: nobody is trusted. */
  readonly trustedProxies?: TrustedProxies;
  /** PROXY_PROTOCOL (Node): PROXY headers read from trusted peers on PORT and HTTPS_PORT. */
  readonly proxyProtocol?: boolean;
  /** GATEWAYS; undefined: the routes of every Gateway are served. */
  readonly gateways: ReadonlySet<string> | undefined;
  readonly ipFamily: IpFamilyPolicy;
  /** CLUSTER_STEERING: the policy of Services that do not name one. */
  readonly clusterSteering: SteeringPolicy;
  /** ROUTER_LOCATION. */
  readonly routerLocation: GeoPoint | undefined;
  /** CLUSTER_PLACES: places the router pins (cluster-places.ts); undefined: every cluster's heartbeat's. */
  readonly clusterPlaces?: ClusterPlaces | undefined;
  readonly adminToken: string | undefined;
  readonly tryTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly clientBodyIdleTimeoutMs: number;
  readonly clientKeepAliveTimeoutMs: number;
  readonly clientHeadersTimeoutMs: number;
  readonly retries: number;
  readonly cacheTtlMs: number;
  /** FAIL_STATIC_MAX_MS: a cluster stale this long serves nothing (core/trust/fail-static-bound.ts); 0 = no bound. */
  readonly failStaticMaxMs?: number;
  readonly workerHostBudgetBytes: number;
  /** CLUSTER_MAX_BYTES, CLUSTER_MAX_RECORDS, RECORD_MAX_BYTES (Node's reader, store/record-budget.ts). */
  readonly clusterBudget: RecordBudget;
  /** CLUSTER_MAX_CHANGES_PER_SECOND (Node's reader, store/change-rate.ts). */
  readonly clusterChangesPerSecond: number;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  readonly accessLog: AccessLogSettings;
  readonly metricsBackends: BackendSeries;
  /** H2C_STREAMS_PER_SESSION and H2C_SESSIONS_PER_BACKEND; absent: their defaults. */
  readonly h2c?: { readonly streamsPerSession: number; readonly sessionsPerBackend: number };
}

/** Validates the environment; throws one error listing every bad variable. */
export function parseRouterConfig(env: Record<string, unknown>): RouterConfig {
  const e = parseEnv(RouterEnvSchema, env, "router");
  if (e.PROXY_PROTOCOL && e.TRUSTED_PROXIES === undefined) {
    throw new ConfigurationError(
      "invalid router configuration: PROXY_PROTOCOL: set TRUSTED_PROXIES to the balancers that send the header (it is accepted from no one else)",
    );
  }
  return {
    redisUrl: e.REDIS_URL,
    redis: e.REDIS_URL === undefined ? undefined : redisTargetOrThrow(e.REDIS_URL, e.REDIS_CLUSTER, "router"),
    port: e.PORT,
    host: e.HOST ?? "0.0.0.0",
    // Routers on any free port (tests, several per machine) would all fight for one fixed admin port.
    adminPort: e.ADMIN_PORT ?? (e.PORT === 0 ? 0 : DEFAULT_ADMIN_PORT),
    adminHost: e.ADMIN_HOST,
    httpsPort: e.HTTPS_PORT ?? (e.PORT === 0 ? 0 : DEFAULT_HTTPS_PORT),
    tlsListenerPorts: e.HTTPS_LISTENER_PORTS,
    tlsStoreKey: e.TLS_STORE_KEY,
    prefix: e.EDGESLICE_PREFIX,
    cluster: e.ROUTER_CLUSTER,
    zone: e.ROUTER_ZONE,
    clusterGrants: e.CLUSTER_GRANTS,
    trustedProxies: e.TRUSTED_PROXIES ?? NO_TRUSTED_PROXIES,
    tracing:
      (e.OTEL_EXPORTER_OTLP_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined &&
      !e.OTEL_SDK_DISABLED
        ? {
            serviceName: e.OTEL_SERVICE_NAME ?? "edgeslice-router",
            // OTLP/HTTP: the traces path under the endpoint, unless the traces URL is given whole.
            url:
              e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
              `${e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, "")}/v1/traces`,
            sampler: e.OTEL_TRACES_SAMPLER,
            ratio: samplerRatio(e.OTEL_TRACES_SAMPLER_ARG),
          }
        : undefined,
    proxyProtocol: e.PROXY_PROTOCOL,
    gateways: e.GATEWAYS,
    ipFamily: e.IP_FAMILY,
    clusterSteering: e.CLUSTER_STEERING,
    routerLocation: e.ROUTER_LOCATION,
    clusterPlaces: e.CLUSTER_PLACES,
    adminToken: e.ADMIN_TOKEN,
    tryTimeoutMs: e.UPSTREAM_TRY_TIMEOUT_MS,
    totalTimeoutMs: e.UPSTREAM_TOTAL_TIMEOUT_MS,
    clientBodyIdleTimeoutMs: e.CLIENT_BODY_IDLE_TIMEOUT_MS,
    clientKeepAliveTimeoutMs: e.CLIENT_KEEP_ALIVE_TIMEOUT_MS,
    clientHeadersTimeoutMs: e.CLIENT_HEADERS_TIMEOUT_MS,
    retries: e.UPSTREAM_RETRIES,
    cacheTtlMs: e.CACHE_TTL_MS,
    failStaticMaxMs: e.FAIL_STATIC_MAX_MS,
    workerHostBudgetBytes: e.WORKER_HOST_BUDGET_BYTES,
    clusterBudget: {
      maxBytes: e.CLUSTER_MAX_BYTES,
      maxRecords: e.CLUSTER_MAX_RECORDS,
      maxRecordBytes: e.RECORD_MAX_BYTES,
    },
    clusterChangesPerSecond: e.CLUSTER_MAX_CHANGES_PER_SECOND,
    logLevel: e.LOG_LEVEL,
    accessLog: { enabled: e.ACCESS_LOG, sample: e.ACCESS_LOG_SAMPLE },
    metricsBackends: e.METRICS_BACKENDS,
    h2c: { streamsPerSession: e.H2C_STREAMS_PER_SESSION, sessionsPerBackend: e.H2C_SESSIONS_PER_BACKEND },
  };
}

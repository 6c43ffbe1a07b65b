import * as v from "valibot";
import { ConfigurationError } from "../../lib/configuration-error.js";
import { booleanFromEnv, fractionFromEnv, integerFromEnv, optionalText, parseEnv } from "../../lib/env.js";
import { TlsStoreKeyEnvSchema } from "../../store/certificates.js";
import { ClusterNameSchema, DEFAULT_PREFIX, PrefixSchema } from "../../store/names.js";
import { type GeoPoint, parseGeoPoint } from "../../store/places.js";
import { type RedisTarget, redisTargetOrThrow } from "../../store/redis/target.js";
import { STEERING_POLICIES, type SteeringPolicy } from "../../store/steering.js";
import type { AccessLogSettings } from "./access-log.js";
import { BACKEND_SERIES, type BackendSeries } from "./backend-metrics.js";
import { type ClusterGrants, parseClusterGrants } from "./cluster-grants.js";
import { parseGatewayNames } from "./gateway-names.js";
import { DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS } from "./routing-defaults.js";
import { NO_TRUSTED_PROXIES, parseTrustedProxies, type TrustedProxies } from "./trusted-proxies.js";

export const IP_FAMILY_POLICIES = ["PreferIPv4", "PreferIPv6", "IPv4", "IPv6"] as const;
export type IpFamilyPolicy = (typeof IP_FAMILY_POLICIES)[number];

/** The router's environment (the same names as Workers vars/secrets; docs/configuration.md lists each with its default). */
export const RouterEnvSchema = v.object({
  /** One URL, or with REDIS_CLUSTER a comma list of seed nodes (store/redis/target.ts). */
  REDIS_URL: optionalText,
  /** Node only: REDIS_URL names Redis Cluster seed nodes. */
  REDIS_CLUSTER: booleanFromEnv(false),
  PORT: integerFromEnv(8080, 0, 65535),
  /** Node only: the address to bind; `::` for dual-stack, `127.0.0.1` for local only. */
  HOST: optionalText,
  /** Node only: the admin listener (explain, metrics, dashboard); unset: 9901, or any free port when PORT is 0. */
  ADMIN_PORT: v.optional(integerFromEnv(9901, 0, 65535)),
  /** Node only: the admin listener's address; unset: HOST's. */
  ADMIN_HOST: optionalText,
  /** Node only: HTTPS with the certificates syncs publish (functions/node/tls/); unset: 8443, or any free port when PORT is 0. */
  HTTPS_PORT: v.optional(integerFromEnv(8443, 0, 65535)),
  /** Node only: opens the certificate records' keys (store/certificates.ts); unset: no HTTPS listener. */
  TLS_STORE_KEY: TlsStoreKeyEnvSchema,
  EDGESLICE_PREFIX: v.optional(PrefixSchema, DEFAULT_PREFIX),
  ROUTER_CLUSTER: v.pipe(optionalText, v.optional(ClusterNameSchema)),
  ROUTER_ZONE: optionalText,
  /** Hosts and networks each cluster may publish (cluster-grants.ts); unset: any cluster, anything. */
  CLUSTER_GRANTS: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseClusterGrants(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({
        message: `CLUSTER_GRANTS must be cluster=hosts:a.test,*.b.test networks:10.1.0.0/16;...: ${parsed.error}`,
      });
      return NEVER;
    }),
  ),
  /**
   * Node only: the load balancers in front of the router, as CIDRs or addresses (`10.0.0.0/8,2001:db8::/32`).
   * Their X-Forwarded-For, -Proto, -Host and Forwarded are kept and extended, and the client they name is the
   * one logged; anyone else's are replaced by what the router saw. Unset: nobody is trusted.
   */
  TRUSTED_PROXIES: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseTrustedProxies(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `must be CIDRs or addresses, comma-separated: ${parsed.error}` });
      return NEVER;
    }),
  ),
  /**
   * Node only: read the PROXY protocol header (v1 or v2) a network balancer sends before the connection's
   * bytes, on PORT and HTTPS_PORT, from TRUSTED_PROXIES only; its source address is the client's.
   */
  PROXY_PROTOCOL: booleanFromEnv(false),
  /** The Gateways (`namespace/name`, comma-separated) whose HTTPRoutes this router serves; unset: every one. */
  GATEWAYS: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseGatewayNames(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `GATEWAYS must be namespace/name,namespace/name: ${parsed.error}` });
      return NEVER;
    }),
  ),
  /** How a Service without the `edgeslice.io/cluster-steering` annotation is spread across clusters (core/steering/). */
  CLUSTER_STEERING: v.optional(
    v.picklist(STEERING_POLICIES, `CLUSTER_STEERING must be one of ${STEERING_POLICIES.join(", ")}`),
    "local-first",
  ),
  /** `lat,long` of this router: where proximity steering measures from when the request says nothing (Node). */
  ROUTER_LOCATION: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseGeoPoint(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `ROUTER_LOCATION must be lat,long in decimal degrees: ${parsed.error}` });
      return NEVER;
    }),
  ),
  IP_FAMILY: v.optional(
    v.picklist(IP_FAMILY_POLICIES, `IP_FAMILY must be one of ${IP_FAMILY_POLICIES.join(", ")}`),
    "PreferIPv4",
  ),
  ADMIN_TOKEN: optionalText,
  /** Per attempt: time to response headers, from when the whole request was sent (Envoy's per-try timeout). */
  UPSTREAM_TRY_TIMEOUT_MS: integerFromEnv(10_000, 1, 600_000),
  /** Whole request across retries, until response headers; it starts as the per-try timeout does. */
  UPSTREAM_TOTAL_TIMEOUT_MS: integerFromEnv(30_000, 1, 3_600_000),
  /**
   * Longest wait for the next bytes of a client's request body (nginx's client_body_timeout, default 60 s):
   * past it the client gets 408 and the backend is not blamed.
   */
  CLIENT_BODY_IDLE_TIMEOUT_MS: integerFromEnv(DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS, 1, 3_600_000),
  /**
   * Node only: how long an idle client connection stays open for its next request. Longer than the idle timeout
   * of a load balancer in front (60 s on AWS ALB, GCP and Azure by default), so the balancer, which reuses its
   * idle connections, always closes first: a router closing first races a reuse, and that request is reset.
   */
  CLIENT_KEEP_ALIVE_TIMEOUT_MS: integerFromEnv(65_000, 1, 3_600_000),
  /**
   * Node only: longest wait for a request's whole head, from its first byte or, on a new connection, from the
   * connect. Above the keep-alive timeout, so a connection a balancer opened ahead and left unused is not cut first.
   * At most Node's request timeout (300 s), which bounds a request's head anyway.
   */
  CLIENT_HEADERS_TIMEOUT_MS: integerFromEnv(66_000, 1, 300_000),
  /** Further attempts on other backends (connect failures, or idempotent methods). */
  UPSTREAM_RETRIES: integerFromEnv(2, 0, 10),
  /** Workers: how long decoded records are served from isolate memory before a background refresh. */
  CACHE_TTL_MS: integerFromEnv(2_000, 0, 600_000),
  /**
   * Workers: bytes of serialized records an isolate holds at most once the store is larger (host mode,
   * workers/host-budget.ts); 32 MiB leaves a 128 MB isolate room for their decoded form and the requests.
   */
  WORKER_HOST_BUDGET_BYTES: integerFromEnv(32 * 1024 * 1024, 1, 1024 * 1024 * 1024),
  LOG_LEVEL: v.optional(v.picklist(["debug", "info", "warn", "error"]), "info"),
  /** One JSON line per request on stdout (core/access-log.ts). */
  ACCESS_LOG: booleanFromEnv(false),
  /** The fraction of requests the access log writes, 0 to 1. */
  ACCESS_LOG_SAMPLE: fractionFromEnv(1),
  /** edgeslice_backends per `service` (and cluster), per `cluster` only, or `none` (core/backend-metrics.ts). */
  /**
   * Node only, h2c backends (node/h2-upstream/): streams the router opens on one HTTP/2 session before it
   * opens another (the backend's SETTINGS_MAX_CONCURRENT_STREAMS wins when lower), and sessions per backend.
   */
  H2C_STREAMS_PER_SESSION: integerFromEnv(100, 1, 10_000),
  H2C_SESSIONS_PER_BACKEND: integerFromEnv(4, 1, 256),
  METRICS_BACKENDS: v.optional(
    v.picklist(BACKEND_SERIES, `METRICS_BACKENDS must be one of ${BACKEND_SERIES.join(", ")}`),
    "service",
  ),
});

export type RouterEnv = v.InferOutput<typeof RouterEnvSchema>;

/** The HTTPS listener's port when HTTPS_PORT is unset (unprivileged, as PORT's 8080). */
export const DEFAULT_HTTPS_PORT = 8443;

/** The admin listener's port when ADMIN_PORT is unset (Envoy's admin port). */
export const DEFAULT_ADMIN_PORT = 9901;

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
  /** TLS_STORE_KEY, decoded (Node); undefined: no HTTPS listener, and the router says why once. */
  readonly tlsStoreKey?: Uint8Array | undefined;
  readonly prefix: string;
  readonly cluster: string | undefined;
  readonly zone: string | undefined;
  /** CLUSTER_GRANTS; undefined: any cluster may publish any host and backend address. */
  readonly clusterGrants: ClusterGrants | undefined;
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
  readonly adminToken: string | undefined;
  readonly tryTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly clientBodyIdleTimeoutMs: number;
  readonly clientKeepAliveTimeoutMs: number;
  readonly clientHeadersTimeoutMs: number;
  readonly retries: number;
  readonly cacheTtlMs: number;
  readonly workerHostBudgetBytes: number;
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
    tlsStoreKey: e.TLS_STORE_KEY,
    prefix: e.EDGESLICE_PREFIX,
    cluster: e.ROUTER_CLUSTER,
    zone: e.ROUTER_ZONE,
    clusterGrants: e.CLUSTER_GRANTS,
    trustedProxies: e.TRUSTED_PROXIES ?? NO_TRUSTED_PROXIES,
    proxyProtocol: e.PROXY_PROTOCOL,
    gateways: e.GATEWAYS,
    ipFamily: e.IP_FAMILY,
    clusterSteering: e.CLUSTER_STEERING,
    routerLocation: e.ROUTER_LOCATION,
    adminToken: e.ADMIN_TOKEN,
    tryTimeoutMs: e.UPSTREAM_TRY_TIMEOUT_MS,
    totalTimeoutMs: e.UPSTREAM_TOTAL_TIMEOUT_MS,
    clientBodyIdleTimeoutMs: e.CLIENT_BODY_IDLE_TIMEOUT_MS,
    clientKeepAliveTimeoutMs: e.CLIENT_KEEP_ALIVE_TIMEOUT_MS,
    clientHeadersTimeoutMs: e.CLIENT_HEADERS_TIMEOUT_MS,
    retries: e.UPSTREAM_RETRIES,
    cacheTtlMs: e.CACHE_TTL_MS,
    workerHostBudgetBytes: e.WORKER_HOST_BUDGET_BYTES,
    logLevel: e.LOG_LEVEL,
    accessLog: { enabled: e.ACCESS_LOG, sample: e.ACCESS_LOG_SAMPLE },
    metricsBackends: e.METRICS_BACKENDS,
    h2c: { streamsPerSession: e.H2C_STREAMS_PER_SESSION, sessionsPerBackend: e.H2C_SESSIONS_PER_BACKEND },
  };
}

import * as v from "valibot";
import { booleanFromEnv, integerFromEnv, optionalText } from "../../../lib/env.js";
import { TlsStoreKeyEnvSchema } from "../../../store/certificates.js";
import { DEFAULT_CHANGES_PER_SECOND } from "../../../store/change-rate.js";
import { ClusterNameSchema, DEFAULT_PREFIX, PrefixSchema } from "../../../store/names.js";
import { parseGeoPoint } from "../../../store/places.js";
import { DEFAULT_RECORD_BUDGET } from "../../../store/record-budget.js";
import { MAX_RECORD_BYTES } from "../../../store/records.js";
import { DEFAULT_REDIS_URL } from "../../../store/redis/target.js";
import { STEERING_POLICIES } from "../../../store/steering.js";
import { parseTrustedProxies } from "../http/trusted-proxies.js";
import { parseTlsListenerPorts } from "../tls/tls-ports.js";
import { parseClusterGrants } from "../trust/cluster-grants.js";
import { parseClusterPlaces } from "../trust/cluster-places.js";
import { EXCHANGE_ENV } from "./exchange-env.js";
import { parseGatewayNames } from "./gateway-names.js";
import { LOGGING_ENV, TELEMETRY_ENV } from "./observability-env.js";

export const IP_FAMILY_POLICIES = ["PreferIPv4", "PreferIPv6", "IPv4", "IPv6"] as const;
export type IpFamilyPolicy = (typeof IP_FAMILY_POLICIES)[number];

/**
 * The router's environment (the same names as Workers vars/secrets). Each entry's v.description is its line in
 * docs/configuration.md (`npm run docs:config` writes it; a test fails when the page is behind); a
 * v.metadata `default` says how to read a default the schema alone cannot show.
 */
export const RouterEnvSchema = v.object({
  // One URL, or with REDIS_CLUSTER a comma list of seed nodes (store/redis/target.ts).
  REDIS_URL: v.pipe(
    optionalText,
    v.description(
      "the store (`redis://` or `rediss://`); use the read-only router ACL user ([Redis](redis.md#acl-users)). Workers: a secret, required",
    ),
    v.metadata({ default: `Node: \`${DEFAULT_REDIS_URL}\`` }),
  ),
  REDIS_CLUSTER: v.pipe(
    booleanFromEnv(false),
    v.description(
      "Node: `REDIS_URL` lists Redis Cluster seed nodes, comma-separated; credentials and TLS from the first ([Redis Cluster](redis.md#redis-cluster))",
    ),
  ),
  PORT: v.pipe(
    integerFromEnv(8080, 0, 65535),
    v.description("Node: the public listen port (HTTP/1.1 and h2c)"),
  ),
  HOST: v.pipe(
    optionalText,
    v.description(
      "Node: the IP address to bind (`node dist/router.js`, `npm run router`; `npm start` binds 127.0.0.1); `::` for dual-stack and IPv6-only clusters",
    ),
    v.metadata({ default: "`0.0.0.0`" }),
  ),
  ADMIN_PORT: v.pipe(
    v.optional(integerFromEnv(9901, 0, 65535)),
    v.description(
      "Node: the admin listener, the only one that answers explain, routes, metrics and the dashboard ([admin endpoints](operations.md#admin-endpoints-and-status-codes))",
    ),
    v.metadata({ default: "`9901` (`0`, any free port, when `PORT` is `0`)" }),
  ),
  ADMIN_HOST: v.pipe(
    optionalText,
    v.description("Node: the admin listener's address, e.g. `127.0.0.1` to keep admin on the machine"),
    v.metadata({ default: "`HOST`'s value" }),
  ),
  HTTPS_PORT: v.pipe(
    v.optional(integerFromEnv(8443, 0, 65535)),
    v.description(
      "Node: TLS for the Gateway listener port 443: HTTPS with the certificates HTTPS listeners reference, `h2` and `http/1.1` by ALPN, and TLS passthrough for TLSRoutes ([TLS](tls.md)); served only with `TLS_STORE_KEY`",
    ),
    v.metadata({ default: "`8443` (`0`, any free port, when `PORT` is `0`)" }),
  ),
  HTTPS_LISTENER_PORTS: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseTlsListenerPorts(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `HTTPS_LISTENER_PORTS must be listenerPort=routerPort,...: ${parsed.error}` });
      return NEVER;
    }),
    v.description(
      "Node: more Gateway listener ports served over TLS, each on a router port of its own, `listenerPort=routerPort` comma-separated (`8443=9443,8883=9883`; router port `0`: any free one). A TLS connection names no port the way a Host header does, so this is how TLS listeners on ports other than 443 (TLSRoutes, `tls.frontend.perPort`) are told apart ([TLS](tls.md))",
    ),
    v.metadata({ default: "unset: only `HTTPS_PORT`" }),
  ),
  TLS_STORE_KEY: v.pipe(
    TlsStoreKeyEnvSchema,
    v.description(
      "Node: 32 bytes in base64, the syncs' key that opens the certificate records (store/certificates.ts) and Gateways' backend client certificates (store/backend-tls.ts); unset, no HTTPS listener (said once in the log) and no client certificate presented to pods",
    ),
  ),
  EDGESLICE_PREFIX: v.pipe(
    v.optional(PrefixSchema, DEFAULT_PREFIX),
    v.description("the key prefix, the same as the syncs'"),
  ),
  ROUTER_CLUSTER: v.pipe(
    optionalText,
    v.optional(ClusterNameSchema),
    v.description("this router's own cluster: its backends are tried first"),
  ),
  ROUTER_ZONE: v.pipe(
    optionalText,
    v.description("this router's zone: topology hints are applied within its own cluster"),
  ),
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
    v.description(
      "which hosts each cluster may publish routes for, and which networks its backends may be in: `east=hosts:shop.test,*.east.test networks:10.1.0.0/16,fd00:1::/64; west=hosts:pay.test networks:10.2.0.0/16` ([cluster grants](multi-cluster.md#cluster-grants-what-each-cluster-may-publish))",
    ),
    v.metadata({ default: "unset: any cluster may publish anything (said once at start-up)" }),
  ),
  TRUSTED_PROXIES: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseTrustedProxies(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `must be CIDRs or addresses, comma-separated: ${parsed.error}` });
      return NEVER;
    }),
    v.description(
      "Node: the load balancers in front (CIDRs or addresses, comma-separated): their `X-Forwarded-For`/`-Proto`/`-Host` and `Forwarded` are kept and extended, and the client they name is the one logged; anyone else's are replaced by what the router saw ([behind a load balancer](deploy.md#behind-a-load-balancer))",
    ),
    v.metadata({ default: "unset: nobody" }),
  ),
  PROXY_PROTOCOL: v.pipe(
    booleanFromEnv(false),
    v.description(
      "Node: read a PROXY protocol v1 or v2 header, which a network balancer sends before the connection's bytes, on `PORT` and `HTTPS_PORT`, from `TRUSTED_PROXIES` only; its source address is the client's",
    ),
  ),
  GATEWAYS: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseGatewayNames(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `GATEWAYS must be namespace/name,namespace/name: ${parsed.error}` });
      return NEVER;
    }),
    v.description(
      "the Gateways (`namespace/name`, comma-separated) whose HTTPRoutes and GRPCRoutes this router serves: one router Deployment (or Worker) per Gateway address keeps Gateways apart ([Gateways and listener ports](gateway-api.md#gateways-and-listener-ports))",
    ),
    v.metadata({ default: "unset: every Gateway" }),
  ),
  CLUSTER_STEERING: v.pipe(
    v.optional(
      v.picklist(STEERING_POLICIES, `CLUSTER_STEERING must be one of ${STEERING_POLICIES.join(", ")}`),
      "local-first",
    ),
    v.description(
      "how a Service without the `edgeslice.io/cluster-steering` annotation is spread across clusters: `local-first` (`ROUTER_CLUSTER` first, then every other cluster's pods together), `proximity`, `latency` or `weighted` ([cluster steering](multi-cluster.md#cluster-steering))",
    ),
  ),
  ROUTER_LOCATION: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseGeoPoint(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `ROUTER_LOCATION must be lat,long in decimal degrees: ${parsed.error}` });
      return NEVER;
    }),
    v.description(
      "`lat,long` of this router in decimal degrees: where proximity steering measures from when the request does not say (Node; Workers measure from the client's `request.cf`)",
    ),
  ),
  CLUSTER_PLACES: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseClusterPlaces(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({
        message: `CLUSTER_PLACES must be cluster=location:lat,long region:name;...: ${parsed.error}`,
      });
      return NEVER;
    }),
    v.description(
      "where clusters run, as the router says (`east=location:50.11,8.68 region:eu-central-1; west=...`): a cluster listed takes its place from here, never from its heartbeat ([cluster steering](multi-cluster.md#cluster-steering))",
    ),
  ),
  IP_FAMILY: v.pipe(
    v.optional(
      v.picklist(IP_FAMILY_POLICIES, `IP_FAMILY must be one of ${IP_FAMILY_POLICIES.join(", ")}`),
      "PreferIPv4",
    ),
    v.description(
      "`PreferIPv4`, `PreferIPv6`, `IPv4` or `IPv6`: the address family sent to, per cluster (a family not in fallback beats one in fallback)",
    ),
  ),
  ADMIN_TOKEN: v.pipe(
    optionalText,
    v.description(
      "the Bearer token of the admin endpoints; unset, they answer 404 (the probes `livez` and `readyz` stay public)",
    ),
  ),
  // Envoy's per-try timeout: time to response headers, from when the whole request was sent.
  ...EXCHANGE_ENV,
  // An hour outlasts the outages fail static is for (a sync or control plane restarting, a Redis failover, an
  // upgrade: minutes) and ends long before a torn-down cluster's pod network is built again and its IPs reused.
  FAIL_STATIC_MAX_MS: v.pipe(
    integerFromEnv(3_600_000, 0, 30 * 24 * 3_600_000),
    v.description(
      "how long a stale cluster (no heartbeat) still serves its last known routes when no fresh cluster publishes them; after it, it serves nothing (0: for ever) ([operations](operations.md#retiring-a-cluster))",
    ),
  ),
  CACHE_TTL_MS: v.pipe(
    integerFromEnv(2_000, 0, 600_000),
    v.description(
      "Workers: how long records are served from isolate memory before a background refresh ([Workers](workers.md))",
    ),
  ),
  // store/record-budget.ts: what a Node router holds of one cluster; the defaults fit the shipped 512Mi router.
  CLUSTER_MAX_BYTES: v.pipe(
    integerFromEnv(DEFAULT_RECORD_BUDGET.maxBytes, 1, 1024 * 1024 * 1024),
    v.description(
      "Node: serialized bytes of one cluster's service and route records the router holds at most; the rest is refused and reported ([sizing](operations.md#cluster-budgets))",
    ),
  ),
  CLUSTER_MAX_RECORDS: v.pipe(
    integerFromEnv(DEFAULT_RECORD_BUDGET.maxRecords, 1, 10_000_000),
    v.description("Node: service and route records of one cluster the router holds at most"),
  ),
  RECORD_MAX_BYTES: v.pipe(
    integerFromEnv(DEFAULT_RECORD_BUDGET.maxRecordBytes, 1_024, MAX_RECORD_BYTES),
    v.description("Node: one service or route record longer than this is refused unread (at most 4 MiB)"),
  ),
  CLUSTER_MAX_CHANGES_PER_SECOND: v.pipe(
    integerFromEnv(DEFAULT_CHANGES_PER_SECOND, 1, 1_000_000),
    v.description(
      "Node: change entries of one cluster applied per second (bursts of ten times as many, at least 500); a faster stream waits in Redis and is read in coalesced batches",
    ),
  ),
  // 32 MiB leaves a 128 MB isolate room for the records' decoded form and the requests (workers/host-budget.ts).
  WORKER_HOST_BUDGET_BYTES: v.pipe(
    integerFromEnv(32 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    v.description(
      "Workers: serialized record bytes an isolate holds at most; a larger store is held host by host, the least recently used evicted",
    ),
  ),
  ...LOGGING_ENV,
  H2C_STREAMS_PER_SESSION: v.pipe(
    integerFromEnv(100, 1, 10_000),
    v.description(
      "Node: streams on one HTTP/2 connection to an h2c backend (`appProtocol: kubernetes.io/h2c`, GRPCRoute backends) before another opens; the backend's `SETTINGS_MAX_CONCURRENT_STREAMS` wins when lower",
    ),
  ),
  H2C_SESSIONS_PER_BACKEND: v.pipe(
    integerFromEnv(4, 1, 256),
    v.description("Node: HTTP/2 connections per h2c backend; past them, streams share the least busy one"),
  ),
  ...TELEMETRY_ENV,
});

export type RouterEnv = v.InferOutput<typeof RouterEnvSchema>;

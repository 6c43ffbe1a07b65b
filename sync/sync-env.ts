import * as v from "valibot";
import { booleanFromEnv, fractionFromEnv, integerFromEnv, optionalText } from "../lib/env.js";
import { ipBytes } from "../lib/ip.js";
import { TlsStoreKeyEnvSchema } from "../store/certificates.js";
import { ClusterNameSchema, DEFAULT_PREFIX, PrefixSchema } from "../store/names.js";
import { parseGeoPoint, RegionSchema } from "../store/places.js";
import { DEFAULT_REDIS_URL } from "../store/redis/target.js";
import { parseGatewayAddresses } from "./translate/gateway/addresses.js";
import { parseHostClaims } from "./translate/host-claims.js";

/** A comma list, items trimmed, empty ones dropped; unset is empty. */
const CommaListSchema = v.pipe(
  v.optional(v.string(), ""),
  v.transform((text) =>
    text
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  ),
);

const NamespaceListSchema = v.pipe(
  CommaListSchema,
  v.array(
    v.pipe(
      v.string(),
      v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "each namespace must be a DNS-1123 label"),
    ),
  ),
);

const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The sync worker's environment. Each entry's v.description is its line in docs/configuration.md
 * (`npm run docs:config` writes it; a test fails when the page is behind); a v.metadata `default` says how to
 * read a default the schema alone cannot show.
 */
export const SyncEnvSchema = v.object({
  // One URL, or with REDIS_CLUSTER a comma list of seed nodes (store/redis/target.ts).
  REDIS_URL: v.pipe(
    v.optional(v.string(), ""),
    v.transform((url) => url.trim() || DEFAULT_REDIS_URL),
    v.description(
      "the store (`redis://` or `rediss://`); use this cluster's own ACL user ([Redis](redis.md#acl-users))",
    ),
    v.metadata({ default: `\`${DEFAULT_REDIS_URL}\`` }),
  ),
  REDIS_CLUSTER: v.pipe(
    booleanFromEnv(false),
    v.description(
      "`REDIS_URL` lists Redis Cluster seed nodes, comma-separated; credentials and TLS from the first ([Redis Cluster](redis.md#redis-cluster))",
    ),
  ),
  CLUSTER_NAME: v.pipe(
    v.string("CLUSTER_NAME is required"),
    v.trim(),
    v.check((name) => v.is(ClusterNameSchema, name), "CLUSTER_NAME must be a DNS-1123 label (a-z, 0-9, '-')"),
    v.description(
      "this cluster's name in Redis keys and records: a DNS-1123 label, unique among the clusters that share the store (`--print` uses `local` when unset)",
    ),
  ),
  EDGESLICE_PREFIX: v.pipe(
    v.optional(v.string(), ""),
    v.transform((prefix) => prefix.trim() || DEFAULT_PREFIX),
    v.check((prefix) => v.is(PrefixSchema, prefix), "EDGESLICE_PREFIX must be 1-64 of A-Z a-z 0-9 _ . : -"),
    v.description("the key prefix, shared with the routers"),
    v.metadata({ default: `\`${DEFAULT_PREFIX}\`` }),
  ),
  WATCH_NAMESPACES: v.pipe(
    NamespaceListSchema,
    v.description(
      "a comma list of the namespaces to watch; then Roles are enough ([deploy](deploy.md#the-sync-in-each-cluster))",
    ),
    v.metadata({ default: "unset: every namespace" }),
  ),
  SYNC_PORT: v.pipe(
    integerFromEnv(9464, 0, 65535),
    v.description("the port of `/livez`, `/readyz` and `/metrics`"),
  ),
  // Probes reach the pod IP, so `::` on IPv6-only clusters.
  SYNC_HOST: v.pipe(
    v.optional(v.string(), ""),
    v.transform((host) => host.trim() || "0.0.0.0"),
    v.ip("SYNC_HOST must be an IP address"),
    v.description("the address of `/livez`, `/readyz` and `/metrics`; `::` on IPv6-only clusters"),
    v.metadata({ default: "`0.0.0.0`" }),
  ),
  LEASE_MS: v.pipe(
    integerFromEnv(15_000, 1_000, 600_000),
    v.description("the Redis heartbeat lease: routers treat the cluster as stale once it runs out"),
  ),
  HEARTBEAT_MS: v.pipe(
    integerFromEnv(0, 0, 600_000),
    v.description(
      "the heartbeat period; each beat also renews the writer fence, so at most `LEADER_LEASE_MS / 2`",
    ),
    v.metadata({ default: "`LEASE_MS / 5`" }),
  ),
  DEBOUNCE_MS: v.pipe(
    integerFromEnv(50, 0, 60_000),
    v.description("the quiet period that closes a burst of events"),
  ),
  MAX_WAIT_MS: v.pipe(
    integerFromEnv(100, 1, 600_000),
    v.description(
      "the longest a changed Service waits under a constant stream of events (bounds the change latency)",
    ),
  ),
  RESYNC_INTERVAL_MS: v.pipe(
    integerFromEnv(300_000, 0, 86_400_000),
    v.description("the period of a full comparison of the informer cache with Redis; 0 turns it off"),
  ),
  VALVE_MAX_LOSS_FRACTION: v.pipe(
    fractionFromEnv(0.5),
    v.description(
      "safety valve: a change that loses more than this fraction of a Service's endpoints (and at least `VALVE_MIN_LOSS`) is held until it persisted `VALVE_HOLD_MS`; deleting a Service or removing its `edgeslice.io/hosts` is always published at once",
    ),
  ),
  VALVE_MIN_LOSS: v.pipe(
    integerFromEnv(2, 1, 1_000_000),
    v.description("safety valve: the fewest endpoints lost that can hold a change"),
  ),
  VALVE_HOLD_MS: v.pipe(
    integerFromEnv(30_000, 0, 3_600_000),
    v.description("safety valve: how long a held change must persist before it is published"),
  ),
  LEADER_ELECTION: v.pipe(booleanFromEnv(true), v.description("`false` for a single replica")),
  LEASE_NAMESPACE: v.pipe(
    optionalText,
    v.description("the namespace of the `coordination.k8s.io` Lease"),
    v.metadata({ default: "`POD_NAMESPACE`, else `default`" }),
  ),
  LEASE_NAME: v.pipe(
    optionalText,
    v.description("the name of the `coordination.k8s.io` Lease"),
    v.metadata({ default: "`edgeslice-sync-<cluster>`" }),
  ),
  // The API's Lease counts whole seconds; a takeover after a crash must fit within LEASE_MS (config.ts).
  LEADER_LEASE_MS: v.pipe(
    integerFromEnv(8_000, 1_000, 600_000),
    v.description(
      "the Lease duration, and the TTL of the Redis writer fence: a standby takes over about this long (plus up to 1.2 × `LEADER_LEASE_MS / 6`) after a leader crashed. The sync refuses to start when `LEASE_MS − HEARTBEAT_MS` is not above that takeover time plus 1 s, since routers would then see the cluster stale during a takeover",
    ),
  ),
  WATCH_TIMEOUT_SECONDS: v.pipe(
    integerFromEnv(300, 1, 3_600),
    v.description(
      "each watch asks the API server to end it after 1-2 × this; it is then resumed from its last resourceVersion (no relist)",
    ),
  ),
  WATCH_STALL_GRACE_MS: v.pipe(
    integerFromEnv(30_000, 100, 600_000),
    v.description(
      "a watch silent for its own timeout plus this is half-dead: it is aborted and resumed (logged at info)",
    ),
  ),
  HOST_CLAIMS: v.pipe(
    optionalText,
    v.check(
      (text) => parseHostClaims(text).ok,
      (issue) => {
        const parsed = parseHostClaims(issue.input as string | undefined);
        return `HOST_CLAIMS must be namespace=host,*.suffix,...;namespace=...: ${parsed.ok ? "" : parsed.error}`;
      },
    ),
    v.description(
      "which namespaces may claim which hosts: `payments=pay.test,*.pay.test;shop=shop.test;*=*.shared.test` (`*.` covers every name below, `*` everything, namespace `*` every namespace); a refused host is left out of its route, logged once and counted in `edgeslice_sync_host_claims_refused`",
    ),
    v.metadata({ default: "unset: anyone may claim any host" }),
  ),
  INGRESS_STATUS_ADDRESSES: v.pipe(
    CommaListSchema,
    v.check(
      (items) => items.every((item) => ipBytes(item) !== undefined || HOSTNAME.test(item)),
      "INGRESS_STATUS_ADDRESSES must list IP addresses and DNS names",
    ),
    v.description(
      "a comma list of IPs and DNS names written into our Ingresses' `status.loadBalancer.ingress` (the routers' public address); unset, it stays empty",
    ),
  ),
  GATEWAY_ADDRESSES: v.pipe(
    optionalText,
    v.check(
      (text) => parseGatewayAddresses(text).ok,
      (issue) => {
        const parsed = parseGatewayAddresses(issue.input as string | undefined);
        return `GATEWAY_ADDRESSES must be addresses, or class=addresses;namespace/gateway=addresses: ${parsed.ok ? "" : parsed.error}`;
      },
    ),
    v.description(
      "where clients reach the routers, written into our Gateways' `status.addresses` (`kubectl get gateway` ADDRESS): `203.0.113.10,edge.example.com` for every Gateway, or entries per GatewayClass and per Gateway, `edgeslice=203.0.113.10;infra/internal=10.0.0.80` (the Gateway's entry wins over its class's, which wins over the plain list); a Gateway with none is `Programmed=False` (`AddressNotAssigned`) while its routes are served",
    ),
  ),
  CLUSTER_REGION: v.pipe(
    optionalText,
    v.optional(RegionSchema),
    v.description(
      "a region name (`eu-central-1`) written into every heartbeat record; shown in explain and the dashboard",
    ),
  ),
  CLUSTER_LOCATION: v.pipe(
    optionalText,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      if (dataset.value === undefined) return undefined;
      const parsed = parseGeoPoint(dataset.value);
      if (parsed.ok) return parsed.value;
      addIssue({ message: `CLUSTER_LOCATION must be lat,long in decimal degrees: ${parsed.error}` });
      return NEVER;
    }),
    v.description(
      "`lat,long` of the cluster in decimal degrees (`50.11,8.68`), written into every heartbeat record: where proximity steering measures to ([cluster steering](multi-cluster.md#cluster-steering)); unset, the cluster's distance is unknown and it comes after every placed cluster",
    ),
  ),
  TLS_STORE_KEY: v.pipe(
    TlsStoreKeyEnvSchema,
    v.description(
      "32 bytes in base64 (`openssl rand -base64 32`), the same on every sync and Node router of a store: seals the private keys of the certificates HTTPS listeners reference ([TLS](tls.md)) and of Gateways' backend client certificates (`spec.tls.backend`); unset, none is published",
    ),
  ),
  MISSING_KIND_RETRY_MS: v.pipe(
    integerFromEnv(30_000, 100, 3_600_000),
    v.description(
      "how often a kind the API server does not serve (the Gateway API's CRDs not installed) is listed again",
    ),
  ),
  POD_NAME: v.pipe(
    optionalText,
    v.description("this replica's identity in the Lease and the heartbeat (the Deployment sets it)"),
    v.metadata({ default: "`HOSTNAME`, else the host name" }),
  ),
  POD_NAMESPACE: v.pipe(
    optionalText,
    v.description(
      "the pod's namespace, where the Lease lives unless `LEASE_NAMESPACE` says otherwise (the Deployment sets it)",
    ),
  ),
  HOSTNAME: v.pipe(optionalText, v.description("this replica's identity when `POD_NAME` is unset")),
  LOG_LEVEL: v.pipe(
    v.optional(
      v.picklist(["debug", "info", "warn", "error"], "LOG_LEVEL must be debug, info, warn or error"),
      "info",
    ),
    v.description("`debug`, `info`, `warn` or `error`; JSON lines on stderr"),
  ),
});

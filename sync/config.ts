import { hostname } from "node:os";
import { ConfigurationError } from "../lib/configuration-error.js";
import { parseEnv } from "../lib/env.js";
import { ipBytes } from "../lib/ip.js";
import type { ClusterPlace } from "../store/places.js";
import { type RedisTarget, redisTargetOrThrow } from "../store/redis/target.js";
import { SyncEnvSchema } from "./sync-env.js";
import { DEFAULT_ROUTE_SETTINGS, type RouteSettings } from "./translate/desired-routes.js";
import { parseGatewayAddresses } from "./translate/gateway/addresses.js";
import { parseHostClaims } from "./translate/host-claims.js";
import type { LoadBalancerIngress } from "./translate/ingress/translate.js";

export { SyncEnvSchema } from "./sync-env.js";

export interface SyncConfig {
  readonly redis: RedisTarget;
  readonly cluster: string;
  readonly prefix: string;
  /** Empty: every namespace. */
  readonly namespaces: readonly string[];
  readonly port: number;
  readonly host: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  readonly resyncIntervalMs: number;
  readonly valve: { readonly maxLossFraction: number; readonly minLoss: number; readonly holdMs: number };
  readonly leaderElection: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly leaderLeaseMs: number;
  /** TTL of the store's writer fence: LEADER_LEASE_MS with leader election, else at least 3 beats. */
  readonly fenceMs: number;
  readonly watchTimeoutSeconds: number;
  readonly watchStallGraceMs: number;
  /** Controller names, HOST_CLAIMS and the Ingress status addresses. */
  readonly routes: RouteSettings;
  readonly missingKindRetryMs: number;
  /** This replica's identity in the Lease and the heartbeat. */
  readonly identity: string;
  /** CLUSTER_REGION and CLUSTER_LOCATION, written into every heartbeat record. */
  readonly place: ClusterPlace;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  /** TLS_STORE_KEY, decoded; undefined: HTTPS listeners' certificates are not published. */
  readonly tlsStoreKey: Uint8Array | undefined;
}

/** Validates the environment; throws one ConfigurationError listing every bad variable. */
export function parseSyncConfig(
  env: Record<string, unknown>,
  fallbackIdentity: () => string = hostname,
): SyncConfig {
  const e = parseEnv(SyncEnvSchema, env, "sync");
  const heartbeatMs = e.HEARTBEAT_MS > 0 ? e.HEARTBEAT_MS : Math.max(1, Math.floor(e.LEASE_MS / 5));
  if (e.LEADER_ELECTION) checkLeaseTimings(e.LEASE_MS, heartbeatMs, e.LEADER_LEASE_MS);
  return {
    redis: redisTargetOrThrow(e.REDIS_URL, e.REDIS_CLUSTER, "sync"),
    cluster: e.CLUSTER_NAME,
    prefix: e.EDGESLICE_PREFIX,
    namespaces: e.WATCH_NAMESPACES,
    port: e.SYNC_PORT,
    host: e.SYNC_HOST,
    leaseMs: e.LEASE_MS,
    heartbeatMs,
    debounceMs: e.DEBOUNCE_MS,
    maxWaitMs: e.MAX_WAIT_MS,
    resyncIntervalMs: e.RESYNC_INTERVAL_MS,
    valve: { maxLossFraction: e.VALVE_MAX_LOSS_FRACTION, minLoss: e.VALVE_MIN_LOSS, holdMs: e.VALVE_HOLD_MS },
    leaderElection: e.LEADER_ELECTION,
    leaseNamespace: e.LEASE_NAMESPACE ?? e.POD_NAMESPACE ?? "default",
    leaseName: e.LEASE_NAME ?? `edgeslice-sync-${e.CLUSTER_NAME}`,
    leaderLeaseMs: e.LEADER_LEASE_MS,
    fenceMs: e.LEADER_ELECTION ? e.LEADER_LEASE_MS : Math.max(e.LEADER_LEASE_MS, 3 * heartbeatMs),
    watchTimeoutSeconds: e.WATCH_TIMEOUT_SECONDS,
    watchStallGraceMs: e.WATCH_STALL_GRACE_MS,
    routes: {
      ...DEFAULT_ROUTE_SETTINGS,
      hostClaims: hostClaimsOf(e.HOST_CLAIMS),
      loadBalancer: e.INGRESS_STATUS_ADDRESSES.map(
        (item): LoadBalancerIngress => (ipBytes(item) !== undefined ? { ip: item } : { hostname: item }),
      ),
      gatewayAddresses: gatewayAddressesOf(e.GATEWAY_ADDRESSES),
    },
    missingKindRetryMs: e.MISSING_KIND_RETRY_MS,
    identity: e.POD_NAME ?? e.HOSTNAME ?? fallbackIdentity(),
    place: { region: e.CLUSTER_REGION, location: e.CLUSTER_LOCATION },
    logLevel: e.LOG_LEVEL,
    tlsStoreKey: e.TLS_STORE_KEY,
  };
}

function gatewayAddressesOf(text: string | undefined): RouteSettings["gatewayAddresses"] {
  const parsed = parseGatewayAddresses(text);
  return parsed.ok ? parsed.value : DEFAULT_ROUTE_SETTINGS.gatewayAddresses;
}

function hostClaimsOf(text: string | undefined): RouteSettings["hostClaims"] {
  const parsed = parseHostClaims(text);
  return parsed.ok ? parsed.value : undefined;
}

/** The leader renews the Lease at a third of its duration (client-go's proportions). */
export const renewIntervalMs = (leaderLeaseMs: number) => Math.max(100, Math.floor(leaderLeaseMs / 3));
/** A candidate retries at a sixth, jittered by up to 20 % (kube/leader.ts). */
export const retryIntervalMs = (leaderLeaseMs: number) => Math.max(100, Math.floor(leaderLeaseMs / 6));

/** Allowance for the takeover's Lease read and write, the fence, and the new leader's first heartbeat. */
export const TAKEOVER_ALLOWANCE_MS = 1_000;

/**
 * The longest a standby needs after the leader crashed to hold the Lease: the Lease records whole seconds,
 * the standby counts them from its first look at the last renewal (up to one jittered retry period, 1.2 x
 * LEADER_LEASE_MS / 6, after it) and tries again the moment they are up (kube/leader.ts).
 */
export function takeoverMs(leaderLeaseMs: number): number {
  const leaseMs = Math.max(1, Math.ceil(leaderLeaseMs / 1000)) * 1000;
  return leaseMs + Math.ceil(1.2 * retryIntervalMs(leaderLeaseMs)) + TAKEOVER_ALLOWANCE_MS;
}

/**
 * With several replicas the cluster must never look stale to routers while a standby takes over from a
 * crashed leader. The store lease outlives the leader's last beat by LEASE_MS, and that beat came up to
 * HEARTBEAT_MS before the crash; the fence (TTL LEADER_LEASE_MS, renewed by each beat) is free by the time
 * the Lease is, so the new leader beats takeoverMs after the crash at worst. Hence LEASE_MS - HEARTBEAT_MS
 * must exceed takeoverMs(LEADER_LEASE_MS); and a beat must come at least twice per fence TTL.
 */
function checkLeaseTimings(leaseMs: number, heartbeatMs: number, leaderLeaseMs: number): void {
  const takeover = takeoverMs(leaderLeaseMs);
  const problems: string[] = [];
  if (leaseMs - heartbeatMs <= takeover) {
    problems.push(
      `LEASE_MS (${leaseMs}) minus HEARTBEAT_MS (${heartbeatMs}) must exceed the longest takeover after a ` +
        `leader crash, ${takeover} ms (LEADER_LEASE_MS ${leaderLeaseMs} rounded up to seconds, plus a jittered ` +
        `retry period of 1.2 x LEADER_LEASE_MS / 6, plus ${TAKEOVER_ALLOWANCE_MS} ms for the takeover's ` +
        "requests and first heartbeat), or routers see the cluster stale during every takeover: raise LEASE_MS " +
        "or lower HEARTBEAT_MS or LEADER_LEASE_MS",
    );
  }
  if (2 * heartbeatMs > leaderLeaseMs) {
    problems.push(
      `HEARTBEAT_MS (${heartbeatMs}) must be at most half of LEADER_LEASE_MS (${leaderLeaseMs}), the TTL of ` +
        "the writer fence each heartbeat renews, so one lost beat does not drop the fence",
    );
  }
  if (problems.length > 0) throw new ConfigurationError(`invalid sync configuration: ${problems.join("; ")}`);
}

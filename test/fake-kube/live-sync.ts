import type { Redis } from "ioredis";
import { type Logger, silentLogger } from "../../lib/logger.js";
import { clusterKeys } from "../../store/keys.js";
import { decodeStoredService } from "../../store/stored-records.js";
import { parseSyncConfig, type SyncConfig } from "../../sync/config.js";
import { type LiveSync, startLive } from "../../sync/live.js";
import type { FakeKube } from "./server.js";

/**
 * The real sync (`startLive`: informers, reconciler, Redis writer, heartbeat, health server) watching a fake
 * API server, and what it stored.
 */

/**
 * The sync's configuration for a test: its health server on 127.0.0.1 port 0 and no leader election, unless
 * `env` says otherwise; `env` holds the rest in the sync's own variable names (CLUSTER_NAME, REDIS_URL, ...).
 */
export function testSyncConfig(env: Record<string, string>): SyncConfig {
  return parseSyncConfig({ SYNC_PORT: "0", SYNC_HOST: "127.0.0.1", LEADER_ELECTION: "false", ...env });
}

/** The sync configured by testSyncConfig(env), watching `kube`. */
export function startLiveOn(
  kube: FakeKube,
  env: Record<string, string>,
  logger: Logger = silentLogger,
): Promise<LiveSync> {
  return startLive(testSyncConfig(env), { logger, kubeConfig: kube.kubeConfig() });
}

/**
 * The IPv4 endpoint IPs stored for `service` (`ns/name`) on its first port (the one its annotations expose),
 * null when the store holds no valid record of it; either schema version.
 */
export async function storedIps(
  redis: Pick<Redis, "hget">,
  where: { prefix: string; cluster: string },
  service: string,
): Promise<string[] | null> {
  const raw = await redis.hget(clusterKeys(where.prefix, where.cluster).services, service);
  if (raw === null) return null;
  const decoded = decodeStoredService(where.cluster, service, raw);
  const port = decoded?.record.ports[0];
  return port ? port.ipv4.endpoints.map((endpoint) => endpoint.ip) : null;
}

import type { SyncConfig } from "./config.js";
import { type HealthServer, startHealthServer } from "./health-server.js";
import type { ClusterWatch } from "./kube/cluster-watch.js";
import type { Reachability } from "./kube/reachability.js";
import type { SyncMetrics } from "./metrics.js";
import type { PublishRole } from "./publish-role.js";
import type { connectRedis } from "./redis-connection.js";

export interface LiveHealthParts {
  readonly metrics: SyncMetrics;
  readonly watch: ClusterWatch;
  readonly reachability: Reachability;
  readonly redis: ReturnType<typeof connectRedis>;
  readonly role: Pick<PublishRole, "publishing">;
  /** True while a re-push holds the heartbeat (publish/heartbeat.ts holding). */
  readonly repushing: () => boolean;
}

/**
 * /healthz, /readyz and /metrics of a live sync. /readyz says what holds the replica back (not synced, Redis
 * down, not publishing, informers refused or missing) and since when the API server has been unreachable.
 */
export function startLiveHealth(config: SyncConfig, parts: LiveHealthParts): Promise<HealthServer> {
  const { metrics, watch, reachability, redis, role, repushing } = parts;
  metrics.beforeRender(() => {
    const since = reachability.unreachableSince;
    metrics.set("apiserverReachable", since === undefined ? 1 : 0);
    metrics.set("apiserverUnreachableSince", since === undefined ? 0 : Math.floor(since / 1000));
    metrics.set("informersRefused", watch.health().refused.length);
  });
  return startHealthServer({
    port: config.port,
    host: config.host,
    metrics,
    readiness: () => {
      const since = reachability.unreachableSince;
      const { refused, missing } = watch.health();
      return {
        synced: watch.synced,
        redis: redis.status === "ready",
        storeComplete: !repushing(),
        publishing: role.publishing,
        ...(since === undefined ? {} : { apiserverUnreachableSince: new Date(since).toISOString() }),
        ...(refused.length === 0 ? {} : { refused }),
        ...(missing.length === 0 ? {} : { missing }),
      };
    },
  });
}

import { Cluster, Redis } from "ioredis";
import type { RedisTarget } from "./target.js";

/** The store client of the Node processes: one Redis, or a Redis Cluster client speaking to every master. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  readonly lazyConnect?: boolean;
  readonly enableOfflineQueue: boolean;
  readonly maxRetriesPerRequest: number;
  readonly connectTimeout?: number;
  readonly connectionName?: string;
  /** Delay before reconnect attempt `attempt` (1-based). */
  readonly retryStrategy: (attempt: number) => number;
}

/**
 * One client for the target, with the same behaviour either way: no offline queue where the caller asks for
 * none, the caller's reconnect delays (for a Cluster, reconnecting to the whole cluster), a bounded retry per
 * command.
 */
export function createRedisClient(target: RedisTarget, options: RedisClientOptions): RedisClient {
  const common = {
    maxRetriesPerRequest: options.maxRetriesPerRequest,
    ...(options.connectTimeout === undefined ? {} : { connectTimeout: options.connectTimeout }),
    ...(options.connectionName === undefined ? {} : { connectionName: options.connectionName }),
  };
  if (target.kind === "standalone") {
    return new Redis(target.url, {
      ...common,
      lazyConnect: options.lazyConnect ?? false,
      enableOfflineQueue: options.enableOfflineQueue,
      retryStrategy: options.retryStrategy,
    });
  }
  return new Cluster(
    target.nodes.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: options.lazyConnect ?? false,
      enableOfflineQueue: options.enableOfflineQueue,
      clusterRetryStrategy: options.retryStrategy,
      // With TLS, connect to seed nodes by the names given, not the addresses they resolve to, so the
      // certificate is checked against the name it was issued for (ioredis resolves them by default).
      ...(target.tls ? { dnsLookup: keepHostName } : {}),
      redisOptions: {
        ...common,
        ...(target.username === undefined ? {} : { username: target.username }),
        ...(target.password === undefined ? {} : { password: target.password }),
        ...(target.tls ? { tls: {} } : {}),
      },
    },
  );
}

function keepHostName(address: string, callback: (error: Error | null, address: string) => void): void {
  callback(null, address);
}

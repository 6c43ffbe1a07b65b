import { Cluster, Redis } from "ioredis";
import type { BackoffPolicy } from "../../lib/backoff.js";
import type { RedisTarget } from "./target.js";

/** Reconnect delays of the router's client: quick, since a router serves its last view meanwhile. */
export const ROUTER_RECONNECT: BackoffPolicy = { initialMs: 50, maxMs: 2_000 };

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
 *
 * @example
 * const redis = createRedisClient(redisTarget(process.env.REDIS_URL ?? "", false), {
 *   enableOfflineQueue: false,
 *   maxRetriesPerRequest: 1,
 *   retryStrategy: (attempt) => exponentialDelay(attempt, ROUTER_RECONNECT),
 * });
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

/**
 * Waits until the client is ready, at most `limitMs`: true when it is. False on the deadline, or at once when a
 * client without reconnects gave up ('end').
 */
export function untilReady(client: RedisClient, limitMs: number): Promise<boolean> {
  if (client.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off("ready", done);
      client.off("end", done);
      resolve(client.status === "ready");
    };
    const timer = setTimeout(done, limitMs);
    client.once("ready", done);
    client.once("end", done);
  });
}

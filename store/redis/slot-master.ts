import { type Cluster, Redis, type RedisOptions } from "ioredis";
import { untilReady } from "./client.js";

/**
 * A plain connection to the master serving `key`'s slot, with the cluster client's credentials and TLS and the
 * caller's `overrides`. No reconnects of its own: after an error the caller asks for a new one, which follows
 * a failover or a moved slot. Rejects when no master serves the slot or the master does not answer.
 */
export async function connectToSlotMaster(
  cluster: Cluster,
  key: string,
  overrides: RedisOptions,
): Promise<Redis> {
  const slot = Number(await cluster.cluster("KEYSLOT", key));
  const ranges = await cluster.cluster("SLOTS");
  const master = ranges.find(([start, end]) => slot >= start && slot <= end)?.[2];
  if (!master) throw new Error(`no master serves slot ${slot} of ${key}`);
  const [host, port] = master;
  const connection = new Redis({
    ...cluster.options.redisOptions,
    ...overrides,
    host,
    port,
    retryStrategy: () => null,
  });
  connection.on("error", () => {});
  await untilReady(connection, 2_000);
  if (connection.status !== "ready") {
    connection.disconnect();
    throw new Error(`the master of slot ${slot} at ${host}:${port} did not answer`);
  }
  return connection;
}

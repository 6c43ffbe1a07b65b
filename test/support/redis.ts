import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { Cluster, Redis } from "ioredis";

/** The shared Redis the suite runs against (CI makes sure it answers). */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A key prefix no other test run uses: tests never see each other's keys. */
export function uniquePrefix(label = "t"): string {
  return `edgeslice-test-${label}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

/**
 * Deletes every key under `prefix` (call in afterAll/afterEach). On Redis Cluster every master is scanned and
 * each key deleted on its own: keys of different clusters live in different slots, which one DEL cannot span.
 */
export async function deleteKeysWithPrefix(redis: Redis | Cluster, prefix: string): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length === 0) continue;
      if (redis instanceof Cluster) await Promise.all(keys.map((key) => node.del(key)));
      else await node.del(...keys);
    } while (cursor !== "0");
  }
}

export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * A redis-server of the test's own on a free loopback port, for tests that stop, restart or reconfigure
 * Redis (ACLs): the shared instance is never disturbed.
 */
export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A loopback redis-server that keeps nothing on disk, like the machine's own; extra flags go last. */
export function redisServerArgs(port: number, extra: readonly string[] = []): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--loglevel",
    "warning",
    ...extra,
  ];
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn("redis-server", redisServerArgs(port), { stdio: "ignore" });
    await waitUntilAnswers(`redis://127.0.0.1:${port}`);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGKILL");
    });
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop };
}

async function waitUntilAnswers(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      client.disconnect();
    }
  }
}

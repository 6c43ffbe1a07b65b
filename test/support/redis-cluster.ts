import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort, redisServerArgs } from "./redis.js";

const run = promisify(execFile);

/** Redis Cluster nodes talk to each other on the client port + 10000 (the cluster bus). */
const CLUSTER_BUS_OFFSET = 10_000;
const START_TIMEOUT_MS = 20_000;

/**
 * A private 3-master Redis Cluster (no replicas) on free loopback ports, for tests that prove the key
 * layout and the store code on Redis Cluster. The shared Redis is never touched.
 */
export interface PrivateRedisCluster {
  /** Client ports of the masters, as given to `redis-cli --cluster create`. */
  readonly ports: readonly number[];
  /** Seed nodes for ioredis `new Cluster(...)`. */
  readonly nodes: readonly { host: string; port: number }[];
  /** Milliseconds from the first spawn until every node reported cluster_state:ok. */
  readonly startMs: number;
  stop(): Promise<void>;
}

export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), "edgeslice-redis-cluster-"));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports = await clusterPorts(masters);
    for (const port of ports) children.push(await spawnNode(dir, port));
    await Promise.all(ports.map((port) => waitUntilAnswers(port, started + START_TIMEOUT_MS)));
    await run(
      "redis-cli",
      [
        "--cluster",
        "create",
        ...ports.map((port) => `127.0.0.1:${port}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ],
      { timeout: START_TIMEOUT_MS },
    );
    await Promise.all(ports.map((port) => waitUntilClusterOk(port, started + START_TIMEOUT_MS)));
    return {
      ports,
      nodes: ports.map((port) => ({ host: "127.0.0.1", port })),
      startMs: Date.now() - started,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Distinct free ports whose cluster bus port (port + 10000) is free and in range too. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; attempt < 100 && ports.length < count; attempt++) {
    const port = await freePort();
    if (port + CLUSTER_BUS_OFFSET > 65_535 || ports.includes(port)) continue;
    if (await isFree(port + CLUSTER_BUS_OFFSET)) ports.push(port);
  }
  if (ports.length < count) throw new Error(`found only ${ports.length} of ${count} usable port pairs`);
  return ports;
}

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function spawnNode(dir: string, port: number): Promise<ChildProcess> {
  const nodeDir = join(dir, String(port));
  await mkdir(nodeDir);
  const child = spawn(
    "redis-server",
    redisServerArgs(port, [
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      join(dir, `nodes-${port}.conf`),
      "--dir",
      nodeDir,
    ]),
    { stdio: "ignore" },
  );
  child.on("error", () => {});
  return child;
}

function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGKILL");
  });
}

async function withNode<T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

async function waitUntilAnswers(port: number, deadline: number): Promise<void> {
  await pollUntil(deadline, `redis-server on port ${port} to answer`, () =>
    withNode(port, async (client) => (await client.ping()) === "PONG"),
  );
}

async function waitUntilClusterOk(port: number, deadline: number): Promise<void> {
  await pollUntil(deadline, `cluster_state:ok on port ${port}`, () =>
    withNode(port, async (client) => /cluster_state:ok/.test(await client.cluster("INFO"))),
  );
}

async function pollUntil(deadline: number, what: string, check: () => Promise<boolean>): Promise<void> {
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

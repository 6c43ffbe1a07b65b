import { randomBytes } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Logger } from "../../../lib/logger.js";
import { createRedisSnapshotSource, type RedisSnapshotSource } from "../../../store/redis/source.js";
import type { Snapshot } from "../../../store/store.js";
import { endpoint, heartbeat, putRecord, serviceRecord } from "../../e2e/support/contract-layout.js";
import { eventually } from "../../support/eventually.js";
import { capturingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, startPrivateRedis, uniquePrefix } from "../../support/redis.js";

/** How long a test waits for the reader to catch up before it fails. */
export const WAIT_MS = 10_000;

/** Polls `condition` until it holds, failing the test after WAIT_MS naming `what`. */
export function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  return eventually(condition, WAIT_MS, what);
}

export function ipsOf(
  snapshot: Snapshot | undefined,
  cluster: string,
  service: string,
): string[] | undefined {
  const record = snapshot?.clusters.find((c) => c.name === cluster)?.services.get(service);
  return record?.ipv4.endpoints.map((e) => e.ip);
}

/** Whether the source's view of `cluster` is marked stale; undefined while it lists no such cluster. */
export function staleOf(source: { current(): Snapshot | undefined }, cluster: string): boolean | undefined {
  return source.current()?.clusters.find((c) => c.name === cluster)?.stale;
}

/** shop/web of cluster east served by one IPv4 endpoint: the record most tests publish and change. */
export function webRecord(ip: string) {
  return serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint(ip, 80)] });
}

/** Waits until the source serves shop/web of cluster east from `ip`. */
export function untilServingWeb(source: { current(): Snapshot | undefined }, ip: string, what: string) {
  return until(() => ipsOf(source.current(), "east", "shop/web")?.includes(ip) === true, what);
}

export function newClient(url: string, overrides: RedisOptions = {}): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
    ...overrides,
  });
  client.on("error", () => {});
  return client;
}

export function untilConnected(client: Redis): Promise<void> {
  return new Promise<void>((resolve) => client.once("ready", () => resolve()));
}

/** A CLIENT SETNAME no other test run uses, to find a reader's blocking connection. */
export function uniqueConnectionName(): string {
  return `edgeslice-test-${randomBytes(4).toString("hex")}`;
}

/** The id of the connection named `name` while it blocks in XREAD. */
export async function blockingClientId(admin: Redis, name: string): Promise<string> {
  let id: string | undefined;
  await until(async () => {
    const line = String(await admin.client("LIST"))
      .split("\n")
      .find((entry) => entry.includes(` name=${name} `) && entry.includes("cmd=xread"));
    id = line ? /(?:^|\s)id=(\d+)/.exec(line)?.[1] : undefined;
    return id !== undefined;
  }, `a blocking client named ${name}`);
  return id ?? "";
}

export interface SourceOptions {
  url?: string;
  prefix: string;
  connectionName?: string;
  logger?: Logger;
  client?: RedisOptions;
  blockMs?: number;
}

/**
 * Hooks and helpers of a describe block testing the reader on Redis: an admin client on the shared Redis,
 * fresh key prefixes (deleted after the block), readers and private servers stopped after each test.
 */
export function sourceTestBed() {
  let admin: Redis | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  const prefixes: string[] = [];

  beforeAll(() => {
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    for (const prefix of prefixes) if (admin) await deleteKeysWithPrefix(admin, prefix);
    admin?.disconnect();
  });

  const bed = {
    /** The shared Redis, as an administrator. */
    admin(): Redis {
      if (!admin) throw new Error("admin is connected in beforeAll");
      return admin;
    },
    /** A key prefix of this test's own. */
    fresh(): string {
      const prefix = uniquePrefix("source");
      prefixes.push(prefix);
      return prefix;
    },
    /** Runs after the current test, before those registered earlier. */
    onCleanup(cleanup: () => Promise<void>): void {
      cleanups.push(cleanup);
    },
    /** A started reader on its own client (refresh every 100 ms), closed after the test. */
    async startSource(options: SourceOptions): Promise<RedisSnapshotSource> {
      const redis = newClient(options.url ?? REDIS_URL, options.client);
      await untilConnected(redis);
      const source = createRedisSnapshotSource({
        redis,
        prefix: options.prefix,
        logger: options.logger ?? capturingLogger().logger,
        now: Date.now,
        refreshIntervalMs: 100,
        blockMs: options.blockMs ?? 200,
        connectionName: options.connectionName,
      });
      bed.onCleanup(async () => {
        await source.close();
        redis.disconnect();
      });
      await source.start();
      return source;
    },
    /** A private Redis (free to stop and restart) holding east's shop/web at 10.0.0.1, and a client writing it. */
    async privateStoreServingWeb() {
      const redis = await startPrivateRedis();
      bed.onCleanup(() => redis.stop());
      const writer = newClient(redis.url);
      bed.onCleanup(async () => writer.disconnect());
      await untilConnected(writer);
      const prefix = "edgeslice";
      await heartbeat(writer, prefix, "east", 60_000);
      await putRecord(writer, prefix, webRecord("10.0.0.1"));
      return { redis, writer, prefix };
    },
  };
  return bed;
}

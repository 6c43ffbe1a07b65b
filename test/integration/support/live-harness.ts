import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { LiveSync } from "../../../sync/live.js";
import { exposedServiceObject, serviceObject, sliceObject } from "../../fake-kube/fixtures.js";
import { startLiveOn, storedIps } from "../../fake-kube/live-sync.js";
import { type FakeKube, startFakeKube } from "../../fake-kube/server.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { eventually } from "../../support/eventually.js";
import {
  deleteKeysWithPrefix,
  type PrivateRedis,
  REDIS_URL,
  startPrivateRedis,
  uniquePrefix,
} from "../../support/redis.js";

/**
 * One test's world for the live sync tests: a fake API server, the real sync (cluster east, replica
 * sync-test, a 20 ms debounce, a beat every 200 ms) writing to the shared Redis or to a private one, all
 * stopped and cleaned up after each test.
 */
export interface LiveWorld {
  /** A client of the shared Redis. */
  readonly redis: Redis;
  readonly prefix: string;
  readonly kube: FakeKube;
  /** Starts the fake API server (seeded by `seed`), then the sync with `env` writing to `redisUrl`. */
  begin(options?: {
    env?: Record<string, string>;
    redisUrl?: string;
    seed?: (kube: FakeKube) => void;
  }): Promise<LiveSync>;
  /** A private redis-server, stopped after the test. */
  privateRedis(): Promise<PrivateRedis>;
  /** The IPs `client` holds for shop/<name>; null without a (valid) record. */
  endpointsOf(client: Redis, name: string): Promise<string[] | null>;
  /**
   * Waits (10 s by default) until `client` holds exactly `expected` for shop/<name> (null: no record). A read
   * error fails the wait, unless `reconnecting` (a private Redis that restarts): then it reads as no record.
   */
  endpointsBecome(
    client: Redis,
    name: string,
    expected: string[] | null,
    options?: { timeoutMs?: number; reconnecting?: boolean },
  ): Promise<void>;
}

/** A Service in namespace shop, exposed at <name>.example.com unless given other annotations. */
export function shopService(name: string, annotations?: Record<string, string>): ApplyInput {
  return annotations
    ? serviceObject("shop", name, annotations)
    : exposedServiceObject("shop", name, `${name}.example.com`);
}

/** The slice shop/<serviceName>-<suffix> with ready endpoints at `ips`. */
export function shopSlice(serviceName: string, ips: string[], suffix = "a"): ApplyInput {
  return sliceObject("shop", `${serviceName}-${suffix}`, serviceName, ips);
}

/** Registers the hooks that set up and tear down a LiveWorld around each test. */
export function liveWorld(): LiveWorld {
  let redis: Redis | undefined;
  let prefix = "";
  let kube: FakeKube | undefined;
  let live: LiveSync | undefined;
  let ownRedis: PrivateRedis | undefined;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => {
    redis?.disconnect();
  });
  afterEach(async () => {
    await live?.stop();
    live = undefined;
    await kube?.close();
    await ownRedis?.stop();
    ownRedis = undefined;
    if (redis) await deleteKeysWithPrefix(redis, prefix);
  });

  const endpointsOf = (client: Redis, name: string) =>
    storedIps(client, { prefix, cluster: "east" }, `shop/${name}`);
  return {
    get redis() {
      if (!redis) throw new Error("the shared Redis client exists only inside a test");
      return redis;
    },
    get prefix() {
      return prefix;
    },
    get kube() {
      if (!kube) throw new Error("begin() first");
      return kube;
    },
    async begin(options = {}) {
      prefix = uniquePrefix("live");
      kube = await startFakeKube();
      options.seed?.(kube);
      live = await startLiveOn(kube, {
        CLUSTER_NAME: "east",
        REDIS_URL: options.redisUrl ?? REDIS_URL,
        EDGESLICE_PREFIX: prefix,
        DEBOUNCE_MS: "20",
        HEARTBEAT_MS: "200",
        POD_NAME: "sync-test",
        ...options.env,
      });
      return live;
    },
    async privateRedis() {
      ownRedis = await startPrivateRedis();
      return ownRedis;
    },
    endpointsOf,
    async endpointsBecome(client, name, expected, options = {}) {
      let last: string[] | null = null;
      const read = () => endpointsOf(client, name);
      await eventually(
        async () => {
          last = await (options.reconnecting ? read().catch(() => null) : read());
          return JSON.stringify(last) === JSON.stringify(expected);
        },
        options.timeoutMs ?? 10_000,
        () => `shop/${name} holds ${JSON.stringify(expected)}; last value: ${JSON.stringify(last)}`,
      );
    },
  };
}

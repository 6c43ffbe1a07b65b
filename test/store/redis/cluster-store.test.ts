import { afterAll, beforeAll, describe } from "vitest";
import { redisTarget } from "../../../store/redis/target.js";
import { type PrivateRedisCluster, startPrivateRedisCluster } from "../../support/redis-cluster.js";
import { describeStoreContract } from "../store.case.js";
import { redisStoreDriver } from "./store-driver.js";

describe("a private 3-master Redis Cluster", () => {
  let redisCluster: PrivateRedisCluster | undefined;
  beforeAll(async () => {
    redisCluster = await startPrivateRedisCluster();
  });
  afterAll(async () => {
    await redisCluster?.stop();
  });

  describeStoreContract("Redis Cluster", () => {
    const seeds = (redisCluster?.nodes ?? []).map(({ host, port }) => `redis://${host}:${port}`);
    return redisStoreDriver(redisTarget(seeds.join(","), true));
  });
});

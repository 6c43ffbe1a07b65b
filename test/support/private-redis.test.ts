import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type PrivateRedis, startPrivateRedis } from "./redis.js";

describe("private redis for fault tests", () => {
  let redis: PrivateRedis | undefined;
  afterAll(async () => redis?.stop());

  it("comes back empty after a restart, like a Redis that keeps nothing on disk", async () => {
    redis = await startPrivateRedis();
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    client.on("error", () => {});
    await client.set("k", "v");
    await redis.stop();
    await redis.start();
    const again = new Redis(redis.url);
    expect(await again.get("k")).toBeNull();
    client.disconnect();
    again.disconnect();
  });
});

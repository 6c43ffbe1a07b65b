import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import { HeldRecords } from "../../../store/record-budget.js";
import {
  hashSizesOf,
  readHashesWithin,
  readNamedWithin,
  sizeCommands,
  UNCHANGED,
} from "../../../store/redis/budgeted-reads.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

/** A cluster's hashes in the real Redis, read within budgets small enough to see every branch. */
const prefix = uniquePrefix("budgeted-reads");
const keys = clusterKeys(prefix, "evil");
let redis: Redis;

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterEach(async () => {
  await deleteKeysWithPrefix(redis, prefix);
});
afterAll(() => {
  redis.disconnect();
});

async function sizes() {
  const replies = await sizeCommands(redis.pipeline(), keys).exec();
  return hashSizesOf((replies ?? []).map(([, value]) => value));
}

describe("a cluster's hashes read within its budget", () => {
  it("reads both hashes whole when Redis' own size of them fits, and refuses an oversized record", async () => {
    await redis.hset(keys.services, "a/one", "x".repeat(100), "a/two", "y".repeat(3_000));
    await redis.hset(keys.routes, "r:one", "z".repeat(50));
    const held = new HeldRecords({ maxBytes: 64 * 1024, maxRecords: 10, maxRecordBytes: 1_000 });
    const raws = await readHashesWithin(redis, keys, await sizes(), held);
    expect([...(raws?.services.keys() ?? [])]).toEqual(["a/one"]);
    expect([...(raws?.routes.keys() ?? [])]).toEqual(["r:one"]);
    expect(held.report().refused.map((record) => `${record.id} ${record.reason}`)).toEqual([
      "a/two record-size",
    ]);
  });

  it("past the budget, lists the names and reads only what fits, services first, each by id", async () => {
    for (let i = 0; i < 6; i++) await redis.hset(keys.services, `a/${i}`, String(i).repeat(1_000));
    await redis.hset(keys.routes, "r:big", "r".repeat(900));
    const held = new HeldRecords({ maxBytes: 3_500, maxRecords: 100, maxRecordBytes: 1_000 });
    const raws = await readHashesWithin(redis, keys, await sizes(), held);
    expect([...(raws?.services.keys() ?? [])]).toEqual(["a/0", "a/1", "a/2"]);
    expect([...(raws?.routes.keys() ?? [])]).toEqual([]);
    expect(held.report()).toMatchObject({ bytes: 3_000, records: 3, refusedCount: 4 });
  });

  it("reads nothing of hashes many times its budget, not even their names", async () => {
    for (let i = 0; i < 20; i++) await redis.hset(keys.routes, `r:${"n".repeat(2_000)}${i}`, "v");
    const held = new HeldRecords({ maxBytes: 1_000, maxRecords: 100, maxRecordBytes: 1_000 });
    expect(await readHashesWithin(redis, keys, await sizes(), held)).toBeUndefined();
  });

  it("re-reads named records by their sizes first: gone, refused, changed, or the very one held", async () => {
    await redis.hset(keys.routes, "r:same", "s".repeat(100), "r:grows", "g".repeat(100));
    const held = new HeldRecords({ maxBytes: 10_000, maxRecords: 10, maxRecordBytes: 500 });
    const first = await readNamedWithin(redis, keys.routes, "route", ["r:same", "r:grows"], held);
    expect(first.get("r:same")).toBe("s".repeat(100));
    await redis.hset(keys.routes, "r:grows", "g".repeat(600), "r:new", "n".repeat(10));
    const again = await readNamedWithin(
      redis,
      keys.routes,
      "route",
      ["r:same", "r:grows", "r:new", "r:gone"],
      held,
    );
    expect(again.get("r:same")).toBe(UNCHANGED);
    expect(again.get("r:grows")).toBeUndefined();
    expect(again.get("r:new")).toBe("n".repeat(10));
    expect(again.has("r:gone") && again.get("r:gone") === undefined).toBe(true);
    expect(held.report()).toMatchObject({ bytes: 110, records: 2, refusedCount: 1 });
  });
});

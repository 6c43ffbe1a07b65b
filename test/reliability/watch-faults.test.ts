import { describe, expect, it } from "vitest";
import { silentLogger } from "../../lib/logger.js";
import { serviceObject } from "../fake-kube/fixtures.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";
import { eventually } from "../support/eventually.js";
import { cleanupsAfterEach, sharedRedis } from "./support/cleanups.js";
import { readySlice } from "./support/kube-objects.js";
import { type SyncStack, startSyncStack } from "./support/sync-stack.js";

/**
 * API server faults against the real informers, reconciler and Redis writer. Each test starts from five synced
 * Services, injects a fault, makes changes while it lasts (update, delete, add), and then requires the store to
 * equal exactly what the API server holds: nothing lost, nothing left behind.
 */
const defer = cleanupsAfterEach();

const NS = "shop";
const ip = (service: number, generation: number) => `10.${generation}.0.${service}`;

interface World {
  readonly kube: FakeKube;
  readonly sync: SyncStack;
  /** What the store must hold: `ns/name` → sorted `ip:port`. */
  readonly expected: Map<string, string[]>;
}

async function syncedWorld(): Promise<World> {
  const { redis, prefix } = sharedRedis("faults", defer);
  const kube = await startFakeKube();
  defer(() => kube.close());
  const expected = new Map<string, string[]>();
  for (let i = 1; i <= 5; i++) setService(kube, expected, i, 0);
  const sync = await startSyncStack({ kube, redis, prefix, cluster: "east", logger: silentLogger });
  defer(() => sync.stop());
  await storeEquals(sync, expected, "the first sync");
  return { kube, sync, expected };
}

function setService(kube: FakeKube, expected: Map<string, string[]>, i: number, generation: number): void {
  kube.apply(serviceObject(NS, `svc-${i}`, { "edgeslice.io/hosts": `svc-${i}.faults.test` }));
  kube.apply(readySlice(NS, `svc-${i}`, [{ ip: ip(i, generation), port: 8080 }]));
  expected.set(`${NS}/svc-${i}`, [`${ip(i, generation)}:8080`]);
}

/** Changes made while the fault lasts: one update, one deletion, one new Service. */
function changeDuringFault(world: World): void {
  setService(world.kube, world.expected, 1, 7);
  world.kube.remove("EndpointSlice", NS, "svc-2-abc12");
  world.kube.remove("Service", NS, "svc-2");
  world.expected.delete(`${NS}/svc-2`);
  setService(world.kube, world.expected, 6, 0);
}

async function storeEquals(sync: SyncStack, expected: Map<string, string[]>, what: string): Promise<void> {
  let last = new Map<string, string[]>();
  try {
    await eventually(
      async () => {
        last = await sync.stored();
        return JSON.stringify([...last].sort()) === JSON.stringify([...expected].sort());
      },
      10_000,
      `the store matches the API server after ${what}`,
    );
  } finally {
    expect(Object.fromEntries(last)).toEqual(Object.fromEntries(expected));
  }
}

describe("API server and watch faults", () => {
  it("every watch dropped mid-stream: an update, a deletion and an addition made meanwhile all reach the store", async () => {
    const world = await syncedWorld();
    world.kube.dropAllWatches();
    changeDuringFault(world);
    await storeEquals(world.sync, world.expected, "dropped watches");
  });

  it("every watch stalled (connected, silent): the watchdog restarts the informers and the changes made during the stall reach the store", async () => {
    const world = await syncedWorld();
    const restartsBefore = world.sync.restarts;
    world.kube.stallWatches();
    changeDuringFault(world);
    await storeEquals(world.sync, world.expected, "stalled watches");
    expect(world.sync.restarts).toBeGreaterThan(restartsBefore);
  });

  it("the API server answers 500 to the next lists and watches: the sync backs off, retries, and the store ends up exact", async () => {
    const world = await syncedWorld();
    const watchesBefore = world.kube.requests("watch");
    world.kube.failNext(4, 500, { verb: "watch" });
    world.kube.failNext(3, 500, { verb: "list" });
    world.kube.dropAllWatches();
    changeDuringFault(world);
    await storeEquals(world.sync, world.expected, "a run of 500s");
    // The four refused watches, then one working watch per informer (Services, EndpointSlices).
    expect(world.kube.requests("watch")).toBeGreaterThanOrEqual(watchesBefore + 4 + 2);
  });

  it("history compacted while the watches were down (410 Gone): the sync relists and applies a deletion it never saw as an event", async () => {
    const world = await syncedWorld();
    const listsBefore = world.kube.requests("list");
    world.kube.stallWatches();
    changeDuringFault(world);
    world.kube.expireHistory();
    world.kube.dropAllWatches();
    await storeEquals(world.sync, world.expected, "410 Gone");
    expect(world.kube.requests("list")).toBeGreaterThan(listsBefore);
  });

  it("410 Gone answered on the relist itself, then 500s: the sync keeps retrying until the store is exact", async () => {
    const world = await syncedWorld();
    const listsBefore = world.kube.requests("list");
    world.kube.stallWatches();
    changeDuringFault(world);
    world.kube.expireHistory();
    world.kube.failNext(2, 410, { verb: "list" });
    world.kube.failNext(2, 500, { verb: "watch" });
    world.kube.dropAllWatches();
    await storeEquals(world.sync, world.expected, "410 on list");
    // Two refused relists, then a successful one.
    expect(world.kube.requests("list")).toBeGreaterThanOrEqual(listsBefore + 3);
  });
});

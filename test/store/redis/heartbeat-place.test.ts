import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../store/memory-store.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { sourceTestBed } from "./source-support.js";

const FRANKFURT = { region: "eu-central-1", location: { lat: 50.11, long: 8.68 } };

describe("a cluster's place in its heartbeat record", () => {
  const bed = sourceTestBed();

  it("is written by the cluster's Redis writer and read by the router with its first load", async () => {
    const prefix = bed.fresh();
    const writer = createRedisWriter(bed.admin(), { prefix, cluster: "east", place: FRANKFURT });
    await writer.heartbeat({ holder: "sync-0", leaseMs: 60_000, at: Date.now() });
    const source = await bed.startSource({ prefix });
    // start() resolved after the first load: the places are there before any refresh.
    expect(source.heartbeats().get("east")).toMatchObject({ holder: "sync-0", ...FRANKFURT });
  });

  it("is left out of the record of a sync without CLUSTER_REGION and CLUSTER_LOCATION", async () => {
    const prefix = bed.fresh();
    const writer = createRedisWriter(bed.admin(), { prefix, cluster: "east" });
    await writer.heartbeat({ holder: "sync-0", leaseMs: 60_000, at: Date.now() });
    const raw = await bed.admin().get(`${prefix}:{east}:heartbeat`);
    expect(raw).not.toContain("region");
    expect(raw).not.toContain("location");
  });

  it("is kept by the memory store the same way", async () => {
    const store = new MemoryStore();
    await store.writer("east", undefined, FRANKFURT).heartbeat({ holder: "local", leaseMs: 60_000, at: 1 });
    expect(store.heartbeats().get("east")).toMatchObject(FRANKFURT);
  });
});

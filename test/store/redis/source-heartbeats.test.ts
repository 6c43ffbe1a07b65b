import { describe, expect, it } from "vitest";
import { sleep } from "../../../lib/async.js";
import { clusterKeys } from "../../../store/keys.js";
import { SCHEMA_VERSION } from "../../../store/records.js";
import { heartbeat } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { sourceTestBed, until } from "./source-support.js";

describe("redis snapshot source: heartbeat records for the dashboard", () => {
  const bed = sourceTestBed();

  it("reads each cluster's heartbeat on its refresh, with the sync's API server state, without a new snapshot", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const source = await bed.startSource({ prefix });
    await until(() => source.heartbeats().get("east")?.holder === "test", "east's heartbeat");
    expect(source.heartbeats().get("east")?.apiserverUnreachableSince).toBeUndefined();
    const version = source.current()?.version;

    const since = Date.now() - 30_000;
    const beat = { v: SCHEMA_VERSION, cluster: "east", holder: "east-1", at: Date.now(), leaseMs: 60_000 };
    await admin.set(
      clusterKeys(prefix, "east").heartbeat,
      JSON.stringify({ ...beat, apiserverUnreachableSince: since }),
    );
    await until(() => source.heartbeats().get("east")?.holder === "east-1", "the new heartbeat");
    expect(source.heartbeats().get("east")).toEqual({
      holder: "east-1",
      at: beat.at,
      apiserverUnreachableSince: since,
    });
    // Heartbeats change every few seconds: the routes' snapshot must not.
    expect(source.current()?.version).toBe(version);
  });

  it("leaves out an invalid heartbeat record and says so once, however many refreshes meet it", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const { logger, lines } = capturingLogger();
    const source = await bed.startSource({ prefix, logger });
    await until(() => source.heartbeats().has("east"), "east's heartbeat");
    await admin.set(
      clusterKeys(prefix, "east").heartbeat,
      JSON.stringify({ v: SCHEMA_VERSION, cluster: "east" }),
    );
    await until(() => !source.heartbeats().has("east"), "the invalid heartbeat left out");
    const warned = () => lines.filter((line) => line.msg === "ignoring an invalid heartbeat record");
    await until(() => warned().length === 1, "one warning");
    await sleep(3_300); // three refreshes (1 s each)
    expect(warned()).toHaveLength(1);
  });
});

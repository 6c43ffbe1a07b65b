import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import { serializeServiceRecord } from "../../../store/records.js";
import { compareStreamIds, type StreamInfo, streamGapReason } from "../../../store/redis/streams.js";
import { heartbeat, putRecord } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import {
  blockingClientId,
  sourceTestBed,
  uniqueConnectionName,
  untilServingWeb,
  webRecord,
} from "./source-support.js";

describe("redis snapshot source: gaps in a change stream", () => {
  const bed = sourceTestBed();

  it("reloads the whole cluster when its stream was trimmed past the reader's position", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    const connectionName = uniqueConnectionName();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const { logger, lines } = capturingLogger();
    const source = await bed.startSource({ prefix, connectionName, logger });
    const clientId = await blockingClientId(admin, connectionName);

    // The change to shop/web has its entry trimmed away: only a full reload can see it.
    const keys = clusterKeys(prefix, "east");
    const changed = webRecord("10.0.0.8");
    await admin
      .multi()
      .client("KILL", "ID", clientId)
      .hset(keys.services, "shop/web", serializeServiceRecord(changed))
      .xadd(keys.changes, "*", "service", "shop/web", "op", "put")
      .xadd(keys.changes, "*", "service", "shop/other", "op", "delete")
      .xtrim(keys.changes, "MAXLEN", 1)
      .exec();

    await untilServingWeb(source, "10.0.0.8", "the trimmed change");
    expect(lines.some((line) => line.msg === "reloading cluster" && line.cluster === "east")).toBe(true);
  });
});

describe("stream positions", () => {
  it.each([
    ["1-0", "1-0", 0],
    ["1-1", "1-0", 1],
    ["2-0", "10-0", -1],
    ["1700000000000-5", "1700000000000-12", -1],
  ])("orders %s against %s as %i", (a, b, expected) => {
    expect(compareStreamIds(a, b)).toBe(expected);
  });

  const info = (fields: Partial<StreamInfo>): StreamInfo => ({
    lastGeneratedId: "9-0",
    maxDeletedEntryId: "0-0",
    firstEntryId: "3-0",
    entriesAdded: 9,
    length: 9,
    ...fields,
  });
  it.each([
    ["a caught-up reader", info({}), "4-0", undefined],
    ["a reader whose entry is the oldest", info({ firstEntryId: "4-0" }), "4-0", undefined],
    ["a reader whose entry was trimmed", info({ firstEntryId: "7-0", length: 3 }), "4-0", "trimmed"],
    ["a reader past an XDEL", info({ maxDeletedEntryId: "6-0" }), "4-0", "deleted"],
    ["a reset stream", info({ lastGeneratedId: "3-0", firstEntryId: "1-0" }), "4-0", "reset"],
    ["a reader from an empty stream, nothing removed", info({ firstEntryId: "1-0" }), "0-0", undefined],
    [
      "a reader from an empty stream, some trimmed",
      info({ firstEntryId: "7-0", length: 3 }),
      "0-0",
      "trimmed",
    ],
    [
      "Redis 6, a reader from an empty stream",
      info({ maxDeletedEntryId: undefined, entriesAdded: undefined, firstEntryId: "7-0" }),
      "0-0",
      "trimmed",
    ],
  ])("judges %s", (_label, info, lastId, expected) => {
    const reason = streamGapReason(info, lastId);
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toContain(expected);
  });
});

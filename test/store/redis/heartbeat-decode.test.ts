import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../../lib/warn-once.js";
import { decodedHeartbeat, MAX_HEARTBEAT_BYTES } from "../../../store/redis/heartbeats.js";
import { HEARTBEAT } from "../../functions/workers/delta-fixtures.js";
import { recordingLogger } from "../../support/loggers.js";

/** The heartbeat decode both store readers share (the Node reader bounds what it reads; the Workers' does not). */
describe("a heartbeat record as a reader decodes it", () => {
  const padded = `${HEARTBEAT.slice(0, -1)}, "pad": "${"x".repeat(MAX_HEARTBEAT_BYTES)}"}`;

  it.each([
    {
      when: "a record as a sync writes it",
      raw: HEARTBEAT,
      max: MAX_HEARTBEAT_BYTES,
      region: "eu-central",
      warned: 0,
    },
    { when: "one that does not decode", raw: "{", max: MAX_HEARTBEAT_BYTES, region: undefined, warned: 1 },
    {
      when: "one longer than the bound",
      raw: padded,
      max: MAX_HEARTBEAT_BYTES,
      region: undefined,
      warned: 1,
    },
    {
      when: "a long one where nothing bounds it",
      raw: padded,
      max: undefined,
      region: "eu-central",
      warned: 0,
    },
  ])("$when", ({ raw, max, region, warned }) => {
    const { logger, entries } = recordingLogger();
    const warnings = createWarnOnce(logger);
    expect(decodedHeartbeat("east", raw, warnings, max)?.region).toBe(region);
    decodedHeartbeat("east", raw, warnings, max);
    expect(entries.filter((entry) => entry.message === "ignoring an invalid heartbeat record")).toHaveLength(
      warned,
    );
  });
});

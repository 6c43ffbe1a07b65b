import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../../lib/warn-once.js";
import { clusterKeys } from "../../../store/keys.js";
import { serializeServiceRecord } from "../../../store/records.js";
import { loadSnapshot } from "../../../store/redis/snapshot.js";
import { endpoint, heartbeat, putRaw, putRecord, serviceRecord } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { ipsOf, sourceTestBed, until, untilServingWeb, webRecord } from "./source-support.js";

/**
 * What one cluster's sync user may write inside its own hash tag (the documented ACL) must not take the other
 * clusters down nor flood the routers' logs: malformed records and keys are skipped and reported once.
 */
const bed = sourceTestBed();

/** Waits until the reader confirmed its view against Redis `times` more times (its periodic refresh). */
async function untilRefreshed(source: { status(): { lastLoadAt: number | undefined } }, times: number) {
  for (let i = 0; i < times; i++) {
    const before = source.status().lastLoadAt;
    await until(() => source.status().lastLoadAt !== before, "a refresh");
  }
}

const warningsAbout = (lines: Record<string, unknown>[], text: string) =>
  lines.filter((line) => line.level === "warn" && String(line.msg).includes(text));

describe("a hostile store", () => {
  it("reports thousands of heartbeat-shaped keys inside one cluster's tag once, not once per key and refresh", async () => {
    const prefix = bed.fresh();
    const redis = bed.admin();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(redis, prefix, webRecord("127.0.0.1"));
    const pipeline = redis.pipeline();
    for (let i = 0; i < 5_000; i++) pipeline.set(`${prefix}:{east}:j${i}}:{x}:heartbeat`, "{}");
    await pipeline.exec();
    const { logger, lines } = capturingLogger();
    const source = await bed.startSource({ prefix, logger });
    await untilServingWeb(source, "127.0.0.1", "east's record");
    await untilRefreshed(source, 5);
    const reports = warningsAbout(lines, "heartbeat-shaped keys");
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ count: 5_000 });
    expect(lines.filter((line) => line.level === "warn")).toHaveLength(1);
  });

  it("reports a flood of invalid change entries in one line, not one per entry", async () => {
    const prefix = bed.fresh();
    const redis = bed.admin();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(redis, prefix, webRecord("127.0.0.1"));
    const { logger, lines } = capturingLogger();
    const source = await bed.startSource({ prefix, logger });
    await untilServingWeb(source, "127.0.0.1", "east's record");
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1_200; i++)
      pipeline.xadd(clusterKeys(prefix, "east").changes, "*", "junk", String(i));
    await pipeline.exec();
    await putRecord(redis, prefix, webRecord("127.0.0.2"));
    await untilServingWeb(source, "127.0.0.2", "the change after the junk");
    const reports = warningsAbout(lines, "skipping invalid change entries");
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ cluster: "east" });
    expect(Number(reports[0]?.count)).toBeGreaterThan(0);
  });

  it("reports an invalid record once over many whole reloads (the Workers cache reloads on every TTL)", async () => {
    const prefix = bed.fresh();
    const redis = bed.admin();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(redis, prefix, webRecord("127.0.0.1"));
    const bad = serviceRecord({ cluster: "east", service: "shop/bad", ipv4: [endpoint("localhost", 80)] });
    await putRaw(redis, prefix, "east", "shop/bad", serializeServiceRecord(bad));
    const { logger, lines } = capturingLogger();
    const warnings = createWarnOnce(logger);
    for (let version = 1; version <= 5; version++) {
      const snapshot = await loadSnapshot(redis, { prefix, logger, version, warnings });
      expect(ipsOf(snapshot, "east", "shop/web")).toEqual(["127.0.0.1"]);
      expect(ipsOf(snapshot, "east", "shop/bad")).toBeUndefined();
    }
    const reports = warningsAbout(lines, "skipping invalid service record");
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ cluster: "east", service: "shop/bad" });
    expect(String(reports[0]?.reason)).toMatch(/not an IP address literal/);
  });

  it("skips a record of 200,000 endpoints, once, while the rest of the store serves", async () => {
    const prefix = bed.fresh();
    const redis = bed.admin();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(redis, prefix, webRecord("127.0.0.1"));
    const endpoints = Array.from({ length: 200_000 }, (_, i) => endpoint("127.0.0.1", 1 + (i % 65_535)));
    const huge = serviceRecord({ cluster: "east", service: "shop/huge", ipv4: endpoints });
    await putRaw(redis, prefix, "east", "shop/huge", serializeServiceRecord(huge));
    const { logger, lines } = capturingLogger();
    const warnings = createWarnOnce(logger);
    for (let version = 1; version <= 2; version++) {
      const snapshot = await loadSnapshot(redis, { prefix, logger, version, warnings });
      expect(ipsOf(snapshot, "east", "shop/web")).toEqual(["127.0.0.1"]);
      expect(ipsOf(snapshot, "east", "shop/huge")).toBeUndefined();
    }
    expect(warningsAbout(lines, "skipping invalid service record")).toHaveLength(1);
  });

  it("leaves out a cluster whose keys hold the wrong types, and keeps following the others' changes", async () => {
    const prefix = bed.fresh();
    const redis = bed.admin();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(redis, prefix, webRecord("127.0.0.1"));
    await heartbeat(redis, prefix, "west", 60_000);
    await putRecord(
      redis,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv4: [endpoint("127.0.0.2", 80)] }),
    );
    const { logger, lines } = capturingLogger();
    const source = await bed.startSource({ prefix, logger });
    await untilServingWeb(source, "127.0.0.1", "east's record");
    // West's sync user may write any key under its own tag: its change stream becomes a string.
    await redis.del(clusterKeys(prefix, "west").changes);
    await redis.set(clusterKeys(prefix, "west").changes, "not a stream");
    await putRecord(redis, prefix, webRecord("127.0.0.3"));
    await untilServingWeb(source, "127.0.0.3", "east's change after west's stream broke");
    expect(source.current()?.clusters.map((c) => c.name)).toEqual(["east"]);
    const snapshot = await loadSnapshot(redis, { prefix, logger, version: 1 });
    expect(snapshot.clusters.map((c) => c.name)).toEqual(["east"]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(warningsAbout(lines, "skipping a cluster whose keys cannot be read").length).toBeLessThanOrEqual(
      2,
    );
  });
});

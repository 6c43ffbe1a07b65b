import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import { heartbeat, putRecord } from "../../e2e/support/contract-layout.js";
import { startPrivateRedis } from "../../support/redis.js";
import { routeOfSize } from "../../trust/support/hostile-records.js";
import { newClient, sourceTestBed, untilConnected, untilServingWeb, webRecord } from "./source-support.js";

/**
 * Issue 35: "entries naming the same record within one refresh are applied once". A cluster's sync can append
 * change entries naming one large record of its own as fast as it likes; the reader must read that record once
 * per batch, not once per entry. Measured on a private Redis, so its INFO stats count only this reader: the
 * bytes Redis sent while the entries were followed, against the record's size.
 */
const PREFIX = "edgeslice";
const ROUTE = "httproute:shop/big";
/** A valid route record of about 200 KB, under RECORD_MAX_BYTES. */
const BIG = JSON.stringify(routeOfSize(ROUTE, "big.example.test", 200_000));

async function outputBytes(redis: Redis): Promise<number> {
  const info = await redis.info("stats");
  return Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

function entry(id: string): [string, string, ...string[]] {
  return ["*", "v", "2", "kind", "route", "id", id, "op", "put"];
}

describe("change entries naming the same record (issue 35)", () => {
  const bed = sourceTestBed();

  async function world() {
    const redis = await startPrivateRedis();
    bed.onCleanup(() => redis.stop());
    const writer = newClient(redis.url);
    bed.onCleanup(async () => writer.disconnect());
    await untilConnected(writer);
    await heartbeat(writer, PREFIX, "east", 60_000);
    await writer.hset(clusterKeys(PREFIX, "east").routes, ROUTE, BIG);
    await putRecord(writer, PREFIX, webRecord("10.0.0.1"));
    const source = await bed.startSource({ url: redis.url, prefix: PREFIX });
    await untilServingWeb(source, "10.0.0.1", "the first load");
    expect(
      source
        .current()
        ?.clusters.find((c) => c.name === "east")
        ?.routes.has(ROUTE),
    ).toBe(true);
    return { writer, source };
  }

  /** Changes east's shop/web to `ip` and waits until the reader serves it: every entry before it was read. */
  async function marker(writer: Redis, source: Parameters<typeof untilServingWeb>[0], ip: string) {
    await putRecord(writer, PREFIX, webRecord(ip));
    await untilServingWeb(source, ip, `the marker ${ip}`);
  }

  it("reads a record once for 300 entries that name it in one go, and publishes nothing for them", async () => {
    const { writer, source } = await world();
    const before = await outputBytes(writer);
    const version = source.status().version;
    const burst = writer.multi();
    for (let i = 0; i < 300; i++) burst.xadd(clusterKeys(PREFIX, "east").changes, ...entry(ROUTE));
    await burst.exec();
    await marker(writer, source, "10.0.0.2");
    const sent = (await outputBytes(writer)) - before;
    console.log(`300 entries in one go: Redis sent ${sent} bytes (the record is ${BIG.length})`);
    expect(sent).toBeLessThan(2 * BIG.length);
    // The unchanged record is not published again: only the marker's change makes a snapshot.
    expect(source.status().version - version).toBeLessThanOrEqual(2);
  });

  it("reads it at most once per batch while ~200 entries a second name it, not once per entry", async () => {
    const { writer, source } = await world();
    const before = await outputBytes(writer);
    const started = performance.now();
    let entries = 0;
    while (performance.now() - started < 1_000) {
      await writer.xadd(clusterKeys(PREFIX, "east").changes, ...entry(ROUTE));
      entries++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await marker(writer, source, "10.0.0.3");
    const sent = (await outputBytes(writer)) - before;
    const reads = sent / BIG.length;
    console.log(
      `${entries} entries over 1 s: Redis sent ${sent} bytes, ${reads.toFixed(1)} times the record`,
    );
    expect(entries).toBeGreaterThan(50);
    // Batches at least 100 ms apart: about ten reads of the record in a second, whatever the entries.
    expect(reads).toBeLessThan(15);
  });
});

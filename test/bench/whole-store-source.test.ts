import { describe, expect, it } from "vitest";
import { createWorkerSnapshotSource } from "../../bench/workers/whole-store-source.js";
import { silentLogger } from "../../lib/logger.js";
import type { Snapshot } from "../../store/store.js";

/** A controllable load: each call waits until the test resolves or rejects it. */
function controlledLoad() {
  const calls: { version: number; resolve: (s: Snapshot) => void; reject: (e: Error) => void }[] = [];
  const load = (version: number) =>
    new Promise<Snapshot>((resolve, reject) => {
      calls.push({ version, resolve, reject });
    });
  const call = (index: number) => {
    const found = calls[index];
    if (!found) throw new Error(`load call ${index} did not happen (${calls.length} calls)`);
    return found;
  };
  return { load, calls, call };
}

const snapshotOf = (version: number): Snapshot => ({ version, clusters: [] });

function harness(ttlMs = 1000) {
  let clock = 0;
  const loads = controlledLoad();
  const background: Promise<unknown>[] = [];
  const source = createWorkerSnapshotSource({
    load: loads.load,
    ttlMs,
    now: () => clock,
    logger: silentLogger,
  });
  const waitUntil = (promise: Promise<unknown>) => {
    background.push(promise);
  };
  return {
    source,
    loads,
    background,
    waitUntil,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

describe("createWorkerSnapshotSource", () => {
  it("waits for the first load when the isolate is cold", async () => {
    const h = harness();
    const prepared = h.source.prepare(h.waitUntil);
    expect(h.source.current()).toBeUndefined();
    h.loads.call(0).resolve(snapshotOf(h.loads.call(0).version));
    await prepared;
    expect(h.source.current()?.version).toBe(h.loads.call(0).version);
    expect(h.background).toHaveLength(0);
  });

  it("serves from memory without loading while the snapshot is younger than the TTL", async () => {
    const h = harness(1000);
    const first = h.source.prepare(h.waitUntil);
    h.loads.call(0).resolve(snapshotOf(1));
    await first;
    h.advance(999);
    await h.source.prepare(h.waitUntil);
    expect(h.loads.calls).toHaveLength(1);
    expect(h.background).toHaveLength(0);
  });

  it("serves the cached snapshot past the TTL and reloads it in waitUntil", async () => {
    const h = harness(1000);
    const first = h.source.prepare(h.waitUntil);
    h.loads.call(0).resolve(snapshotOf(1));
    await first;
    h.advance(1000);
    await h.source.prepare(h.waitUntil);
    expect(h.source.current()?.version).toBe(1);
    expect(h.background).toHaveLength(1);
    h.loads.call(1).resolve(snapshotOf(2));
    await Promise.all(h.background);
    expect(h.source.current()?.version).toBe(2);
  });

  it("runs one reload at a time however many requests arrive meanwhile", async () => {
    const h = harness(1000);
    const cold = [
      h.source.prepare(h.waitUntil),
      h.source.prepare(h.waitUntil),
      h.source.prepare(h.waitUntil),
    ];
    expect(h.loads.calls).toHaveLength(1);
    h.loads.call(0).resolve(snapshotOf(1));
    await Promise.all(cold);
    h.advance(5000);
    for (let i = 0; i < 5; i++) await h.source.prepare(h.waitUntil);
    expect(h.loads.calls).toHaveLength(2);
    expect(h.background).toHaveLength(1);
    h.loads.call(1).resolve(snapshotOf(2));
    await Promise.all(h.background);
  });

  it("keeps serving the last known snapshot when a reload fails", async () => {
    const h = harness(1000);
    const first = h.source.prepare(h.waitUntil);
    h.loads.call(0).resolve(snapshotOf(1));
    await first;
    h.advance(1000);
    await h.source.prepare(h.waitUntil);
    h.loads.call(1).reject(new Error("connect ECONNREFUSED"));
    await Promise.all(h.background);
    expect(h.source.current()?.version).toBe(1);
  });

  it("gives undefined when the cold load fails, and retries only after the TTL", async () => {
    const h = harness(1000);
    const first = h.source.prepare(h.waitUntil);
    h.loads.call(0).reject(new Error("connect ECONNREFUSED"));
    await first;
    expect(h.source.current()).toBeUndefined();
    h.advance(500);
    await h.source.prepare(h.waitUntil);
    expect(h.loads.calls).toHaveLength(1);
    h.advance(500);
    const retry = h.source.prepare(h.waitUntil);
    expect(h.loads.calls).toHaveLength(2);
    h.loads.call(1).resolve(snapshotOf(7));
    await retry;
    expect(h.source.current()?.version).toBe(7);
  });

  it("stamps each load with a higher version than the one before", async () => {
    const h = harness(0);
    const first = h.source.prepare(h.waitUntil);
    h.loads.call(0).resolve(snapshotOf(h.loads.call(0).version));
    await first;
    await h.source.prepare(h.waitUntil);
    h.loads.call(1).resolve(snapshotOf(h.loads.call(1).version));
    await Promise.all(h.background);
    expect(h.loads.call(1).version).toBeGreaterThan(h.loads.call(0).version);
  });
});

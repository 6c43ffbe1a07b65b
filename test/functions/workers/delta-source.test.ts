import { describe, expect, it } from "vitest";
import type { DeltaReader } from "../../../functions/workers/delta-reader.js";
import { DeltaSnapshotSource } from "../../../functions/workers/delta-source.js";
import type { StoreState } from "../../../functions/workers/delta-state.js";
import { silentLogger } from "../../../lib/logger.js";
import type { ClusterView } from "../../../store/store.js";
import { clusterState, serviceV2, storeState } from "./delta-fixtures.js";

type Pending<T> = { resolve: (value: T) => void; reject: (error: Error) => void };

/** A reader whose every read waits until the test settles it, so the source's order of reads is visible. */
function controlledReader() {
  type Kind = "full" | "refresh" | "cold" | "sizes" | "hostRefresh";
  const calls: { kind: Kind; arg: unknown; pending: Pending<unknown> }[] = [];
  const call =
    <T>(kind: Kind) =>
    (arg: unknown) =>
      new Promise<T>((resolve, reject) => {
        calls.push({ kind, arg, pending: { resolve: resolve as (value: unknown) => void, reject } });
      });
  const reader: DeltaReader = {
    full: call("full"),
    refresh: call("refresh"),
    cold: call("cold"),
    sizes: () => call<never>("sizes")(undefined),
    hostRefresh: call("hostRefresh"),
  };
  return { reader, calls, kinds: () => calls.map(({ kind }) => kind) };
}

const east = clusterState("east", [serviceV2("east", "shop/web", "10.0.0.1")], "1-0");
const whole: StoreState = storeState({ east });
const coldViews: ClusterView[] = [east.view];
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function harness(ttlMs = 1000, hostBudgetBytes?: number) {
  let clock = 0;
  const { reader, calls, kinds } = controlledReader();
  const deferred: Promise<unknown>[] = [];
  const source = new DeltaSnapshotSource({
    reader,
    ttlMs,
    now: () => clock,
    logger: silentLogger,
    hostBudgetBytes,
  });
  return {
    source,
    calls,
    kinds,
    deferred,
    waitUntil: (promise: Promise<unknown>) => deferred.push(promise),
    advance: (ms: number) => {
      clock += ms;
    },
    settle: (index: number, value: unknown) => calls[index]?.pending.resolve(value),
    fail: (index: number) => calls[index]?.pending.reject(new Error("connect ECONNREFUSED")),
  };
}

describe("the Workers delta source", () => {
  it("answers a cold isolate's first request from its host's records and reads the whole store after it", async () => {
    const h = harness();
    const first = h.source.prepare("web.test", h.waitUntil);
    await tick();
    expect(h.kinds()).toEqual(["cold"]);
    h.settle(0, { views: coldViews });
    await first;
    expect(h.source.current()?.clusters).toEqual(coldViews);
    expect(h.kinds()).toEqual(["cold", "full"]);
    expect(h.deferred).toHaveLength(1);
    h.settle(1, whole);
    await Promise.all(h.deferred);
    expect(h.source.current()?.clusters).toEqual([east.view]);
    expect(h.source.status().connected).toBe(true);
  });

  it("makes a request for another host, or for the admin endpoints, wait for the whole store", async () => {
    const h = harness();
    const first = h.source.prepare("web.test", h.waitUntil);
    await tick();
    h.settle(0, { views: coldViews });
    await first;
    let other = false;
    let admin = false;
    const otherHost = h.source.prepare("api.test", h.waitUntil).then(() => {
      other = true;
    });
    const adminRequest = h.source.prepare(undefined, h.waitUntil).then(() => {
      admin = true;
    });
    // The cold host is served at once meanwhile.
    await h.source.prepare("web.test", h.waitUntil);
    await tick();
    expect([other, admin]).toEqual([false, false]);
    h.settle(1, whole);
    await Promise.all([otherHost, adminRequest]);
    expect(h.kinds()).toEqual(["cold", "full"]);
  });

  it("reads the whole store before the first answer when the host index cannot answer", async () => {
    const h = harness();
    const first = h.source.prepare("web.test", h.waitUntil);
    await tick();
    h.settle(0, { incomplete: "cluster east has no host index" });
    await tick();
    expect(h.kinds()).toEqual(["cold", "full"]);
    expect(h.source.current()).toBeUndefined();
    h.settle(1, whole);
    await first;
    expect(h.source.current()?.clusters).toEqual([east.view]);
    expect(h.deferred).toHaveLength(0);
  });

  it("refreshes after the response once the TTL passed, keeping the snapshot object when nothing changed", async () => {
    const h = harness();
    const first = h.source.prepare(undefined, h.waitUntil);
    await tick();
    h.settle(0, whole);
    await first;
    const loaded = h.source.current();
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["full"]);
    h.advance(1000);
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["full", "refresh"]);
    expect(h.calls[1]?.arg).toBe(whole);
    h.settle(1, { state: whole, changed: false, notes: [] });
    await Promise.all(h.deferred);
    expect(h.source.current()).toBe(loaded);
  });

  it("keeps serving the last snapshot when a refresh fails, and tries again only after another TTL", async () => {
    const h = harness();
    const first = h.source.prepare(undefined, h.waitUntil);
    await tick();
    h.settle(0, whole);
    await first;
    const loaded = h.source.current();
    h.advance(1000);
    await h.source.prepare("web.test", h.waitUntil);
    h.fail(1);
    await Promise.all(h.deferred);
    expect(h.source.current()).toBe(loaded);
    expect(h.source.status().connected).toBe(false);
    h.advance(999);
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["full", "refresh"]);
    h.advance(1);
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["full", "refresh", "refresh"]);
  });

  it("has nothing to serve while Redis is down before any read, and does not retry before the TTL", async () => {
    const h = harness();
    const first = h.source.prepare("web.test", h.waitUntil);
    await tick();
    h.fail(0);
    await first;
    expect(h.source.current()).toBeUndefined();
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["cold"]);
    h.advance(1000);
    const again = h.source.prepare("web.test", h.waitUntil);
    await tick();
    expect(h.kinds()).toEqual(["cold", "cold"]);
    h.settle(1, { views: coldViews });
    await again;
    expect(h.source.current()?.clusters).toEqual(coldViews);
  });

  it("tries the whole read again after the TTL when it failed after a cold answer, serving the cold host meanwhile", async () => {
    const h = harness();
    const first = h.source.prepare("web.test", h.waitUntil);
    await tick();
    h.settle(0, { views: coldViews });
    await first;
    h.fail(1);
    await Promise.allSettled(h.deferred.splice(0));
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["cold", "full"]);
    h.advance(1000);
    await h.source.prepare("web.test", h.waitUntil);
    expect(h.kinds()).toEqual(["cold", "full", "full"]);
    expect(h.source.current()?.clusters).toEqual(coldViews);
    h.settle(2, whole);
    await Promise.all(h.deferred);
    expect(h.source.status().lastLoadAt).toBe(1000);
  });

  it("over its host budget, holds the hosts asked for by cold reads, evicts the least recently used, and never reads the whole store", async () => {
    const h = harness(1000, 100);
    const viewOf = (service: string) =>
      clusterState("east", [serviceV2("east", service, "10.0.0.1")], "1-0").view;
    const hostRead = (service: string) => ({ views: [viewOf(service)], heartbeats: new Map(), bytes: 60 });
    const first = h.source.prepare("a.test", h.waitUntil);
    await tick();
    h.settle(0, hostRead("shop/a"));
    await first;
    expect(h.kinds()).toEqual(["cold", "sizes"]);
    h.settle(1, { bytes: 1000, state: { positions: new Map(), scanCursor: "0" } });
    await tick();
    // The host read before the positions is read again after them.
    expect(h.kinds()).toEqual(["cold", "sizes", "cold"]);
    h.settle(2, hostRead("shop/a"));
    await Promise.all(h.deferred);

    const second = h.source.prepare("b.test", h.waitUntil);
    await tick();
    h.settle(3, hostRead("shop/b"));
    await second;
    const services = h.source.current()?.clusters.flatMap((view) => [...view.servicesV2.keys()]);
    expect(services).toEqual(["shop/b"]);
    expect(h.kinds()).toEqual(["cold", "sizes", "cold", "cold"]);
  });
});

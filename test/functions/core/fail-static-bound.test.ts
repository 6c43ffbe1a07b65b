import { describe, expect, it } from "vitest";
import { FailStaticBound } from "../../../functions/core/trust/fail-static-bound.js";
import { createJsonLogger } from "../../../lib/logger.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { ClusterHeartbeat, ClusterView, Snapshot, SnapshotSource } from "../../../store/store.js";

const HOUR = 3_600_000;

function view(name: string, stale: boolean): ClusterView {
  return {
    name,
    stale,
    servicesV2: new Map(),
    services: new Map(),
    routes: new Map([[`httproute:shop/${name}`, {} as RouteRecord]]),
  };
}

/** A store whose snapshot and heartbeats the test sets. */
class Store implements SnapshotSource {
  snapshot: Snapshot = { version: 1, clusters: [] };
  beats: Map<string, ClusterHeartbeat> | undefined;
  current(): Snapshot {
    return this.snapshot;
  }
  get heartbeats(): SnapshotSource["heartbeats"] {
    const beats = this.beats;
    return beats ? () => beats : undefined;
  }
}

function bounded(store: Store, maxStaleMs = HOUR) {
  let now = 1_000_000;
  const lines: { msg: string; cluster?: string }[] = [];
  const logger = createJsonLogger({ write: (line) => lines.push(JSON.parse(line)) });
  const source = new FailStaticBound(store, { maxStaleMs, now: () => now, logger });
  const routes = () =>
    Object.fromEntries(
      ((source.current() as Snapshot | undefined)?.clusters ?? []).map((c) => [c.name, c.routes.size]),
    );
  return { source, lines, routes, advance: (ms: number) => (now += ms), at: () => now };
}

describe("fail static with a bound (FAIL_STATIC_MAX_MS)", () => {
  it("serves a stale cluster's records until it has been quiet for the bound, then nothing, and says so once", () => {
    const store = new Store();
    store.snapshot = { version: 1, clusters: [view("east", false), view("west", true)] };
    const h = bounded(store);

    expect(h.routes()).toEqual({ east: 1, west: 1 });
    h.advance(HOUR - 1);
    expect(h.routes()).toEqual({ east: 1, west: 1 });
    h.advance(1);
    expect(h.routes()).toEqual({ east: 1, west: 0 });
    expect(h.routes()).toEqual({ east: 1, west: 0 });
    expect([...h.source.expired().keys()]).toEqual(["west"]);
    expect(h.lines.filter((line) => line.msg.startsWith("a cluster stale for longer"))).toEqual([
      expect.objectContaining({ cluster: "west" }),
    ]);
  });

  it("counts the quiet time from the cluster's last heartbeat where the source reads them", () => {
    const store = new Store();
    store.snapshot = { version: 1, clusters: [view("west", true)] };
    const h = bounded(store);
    store.beats = new Map([["west", { holder: "west-0", at: h.at() - HOUR }]]);

    expect(h.routes()).toEqual({ west: 0 });
  });

  it("serves the cluster again once it beats (is fresh), and keeps the snapshot itself when nothing expired", () => {
    const store = new Store();
    store.snapshot = { version: 1, clusters: [view("west", true)] };
    const h = bounded(store);
    expect(h.routes()).toEqual({ west: 1 });
    h.advance(HOUR);
    expect(h.routes()).toEqual({ west: 0 });

    store.snapshot = { version: 2, clusters: [view("west", false)] };
    expect(h.source.current()).toBe(store.snapshot);
    expect(h.source.expired().size).toBe(0);
    expect(h.lines.map((line) => line.msg)).toContain("an expired cluster serves again");
  });

  it("never expires anything with the bound at 0 (fail static for ever)", () => {
    const store = new Store();
    store.snapshot = { version: 1, clusters: [view("west", true)] };
    const h = bounded(store, 0);
    h.advance(100 * HOUR);
    expect(h.routes()).toEqual({ west: 1 });
  });
});

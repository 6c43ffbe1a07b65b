import { describe, expect, it } from "vitest";
import { decodeChangeEntry } from "../../store/changes.js";
import { clusterKeys } from "../../store/keys.js";
import { eventually } from "../support/eventually.js";
import { liveWorld, shopService, shopSlice } from "./support/live-harness.js";

describe("live sync against the fake API server and real Redis", () => {
  const w = liveWorld();

  it("follows slice create, update and delete, and the change stream records each", async () => {
    const sync = await w.begin();
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.2"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1", "10.0.0.2"]);
    expect(sync.publishing()).toBe(true);

    w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);

    w.kube.remove("Service", "shop", "web");
    await w.endpointsBecome(w.redis, "web", null);
    const keys = clusterKeys(w.prefix, "east");
    expect(await w.redis.hexists(keys.routes, "shop/web")).toBe(0);
    expect(await w.redis.hexists(keys.routes, "annotation:shop/web")).toBe(0);
    const changes = (await w.redis.xrange(keys.changes, "-", "+")).flatMap(([, fields]) => {
      const decoded = decodeChangeEntry(Object.fromEntries(pairs(fields)));
      return decoded.ok ? decoded.changes : [];
    });
    const ops = changes
      .filter((change) => change.kind === "service")
      .map((change) => `${change.id} ${change.op}`);
    expect(ops.at(-1)).toBe("shop/web delete");
    expect(ops.filter((op) => op === "shop/web put").length).toBeGreaterThanOrEqual(2);
    expect(
      changes.filter((change) => change.kind === "route").map((change) => `${change.id} ${change.op}`),
    ).toEqual(["annotation:shop/web put", "annotation:shop/web delete"]);
    expect(await w.redis.get(keys.lease)).toBe("sync-test");
  });

  it("measures event-to-published latency, counts a relist by its reason, and tracks the API server's reachability", async () => {
    const sync = await w.begin();
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1"]);
    w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.2"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1", "10.0.0.2"]);
    const count = /edgeslice_sync_event_to_published_seconds_count\{cluster="east"\} (\d+)/;
    expect(Number(count.exec(sync.metrics.render())?.[1])).toBeGreaterThanOrEqual(1);

    w.kube.stallWatches();
    w.kube.apply(shopSlice("web", ["10.0.0.3"]));
    w.kube.expireHistory();
    w.kube.dropAllWatches();
    await w.endpointsBecome(w.redis, "web", ["10.0.0.3"]);
    expect(sync.metrics.countOf("relists", "endpointslices", "expired")).toBeGreaterThanOrEqual(1);

    await w.kube.stop();
    await eventually(() => sync.reachability.unreachableSince !== undefined, 10_000, "the outage noticed");
    expect(sync.metrics.render()).toContain('edgeslice_sync_apiserver_reachable{cluster="east"} 0');
    await w.kube.restart();
    await eventually(() => sync.reachability.unreachableSince === undefined, 10_000, "reachable again");
    expect(sync.metrics.render()).toContain(
      'edgeslice_sync_apiserver_unreachable_since_timestamp_seconds{cluster="east"} 0',
    );
  });

  it("publishes nothing before the first full list has synced", async () => {
    const live = await w.begin({
      seed: (kube) => {
        kube.apply(shopService("web"));
        kube.apply(shopSlice("web", ["10.0.0.1"]));
        kube.failNext(3, 403, { verb: "list", kind: "EndpointSlice" });
      },
    });
    const ready = await fetch(`http://127.0.0.1:${live.healthPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(await w.redis.exists(clusterKeys(w.prefix, "east").services)).toBe(0);
    expect(live.publishing()).toBe(false);
    // Once the list succeeds (backoff after the 403s) everything appears.
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1"], { timeoutMs: 20_000 });
    expect((await fetch(`http://127.0.0.1:${live.healthPort}/readyz`)).status).toBe(200);
  });

  it("converges after every watch connection is killed", async () => {
    await w.begin();
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1"]);
    w.kube.dropAllWatches();
    w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.5"]));
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1", "10.0.0.5"], { timeoutMs: 20_000 });
  });

  it("holds a mass removal, then publishes it once it persisted", async () => {
    const sync = await w.begin({ env: { VALVE_HOLD_MS: "1500" } });
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]));
    await eventually(
      async () => (await w.endpointsOf(w.redis, "web"))?.length === 4,
      10_000,
      "four endpoints are stored",
    );
    w.kube.apply(shopSlice("web", []));
    await eventually(() => sync.metrics.get("valveHolds") === 1, 10_000, "the valve holds the removal");
    expect(await w.endpointsOf(w.redis, "web")).toHaveLength(4);
    await w.endpointsBecome(w.redis, "web", []);
  });

  it("logs and skips a malformed annotation and slice while other Services still update", async () => {
    await w.begin();
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1"]));
    w.kube.apply(shopService("api"));
    w.kube.apply(shopSlice("api", ["10.0.1.1"]));
    await w.endpointsBecome(w.redis, "api", ["10.0.1.1"]);
    await w.endpointsBecome(w.redis, "web", ["10.0.0.1"]);

    w.kube.apply(shopService("web", { "edgeslice.io/hosts": "bad host!" }));
    w.kube.apply({ ...shopSlice("api", ["10.0.1.9"], "broken"), endpoints: "not-a-list" });
    w.kube.apply(shopSlice("api", ["10.0.1.1", "10.0.1.2"]));
    await w.endpointsBecome(w.redis, "api", ["10.0.1.1", "10.0.1.2"]);
    expect(await w.endpointsOf(w.redis, "web")).toEqual(["10.0.0.1"]);
  });
});

/** A stream entry's flat field list as [name, value] pairs. */
function pairs(fields: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let index = 0; index + 1 < fields.length; index += 2)
    out.push([fields[index] ?? "", fields[index + 1] ?? ""]);
  return out;
}

import { describe, expect, it } from "vitest";
import { serviceObject, sliceObject } from "../../fake-kube/fixtures.js";
import { eventually } from "../../support/eventually.js";
import { clusterWatches, sliceNames } from "./cluster-watch-kit.js";

describe("cluster watch on the real client-node informers", () => {
  const { setUp } = clusterWatches();

  it("resolves start() once the first LIST of Services and EndpointSlices is in the cache", async () => {
    const h = await setUp((kube) => {
      kube.apply(serviceObject("shop", "web", { "edgeslice.io/hosts": "shop.example" }));
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    });
    expect(h.watch.synced).toBe(false);
    await h.watch.start();
    expect(h.watch.synced).toBe(true);
    expect(h.watch.service("shop", "web")?.metadata.annotations?.["edgeslice.io/hosts"]).toBe("shop.example");
    expect(h.watch.services()).toHaveLength(1);
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a", "web-b"]);
    expect(h.watch.health()).toMatchObject({ synced: true, restarts: 0 });
    expect(h.watch.health().lastEventAt).not.toBeNull();
    expect(h.changes).toContain("shop/web");
  });

  it("fires onServiceChanged for its Service when a slice is added, updated and deleted", async () => {
    const h = await setUp((kube) => kube.apply(serviceObject("shop", "web")));
    await h.watch.start();
    h.changes.length = 0;

    h.kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    await eventually(() => sliceNames(h.watch, "shop", "web").length === 1, 5_000, "slice added");
    h.kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.9"]));
    await eventually(
      () => h.watch.slicesOf("shop", "web")[0]?.endpoints?.[0]?.addresses[0] === "10.0.0.9",
      5_000,
      "slice updated",
    );
    h.kube.remove("EndpointSlice", "shop", "web-a");
    await eventually(() => sliceNames(h.watch, "shop", "web").length === 0, 5_000, "slice deleted");
    expect(h.changes).toEqual(["shop/web", "shop/web", "shop/web"]);
  });

  it("fires for both Services when a slice is relabelled to another Service", async () => {
    const h = await setUp((kube) => kube.apply(sliceObject("shop", "shared", "web", ["10.0.0.1"])));
    await h.watch.start();
    h.changes.length = 0;
    h.kube.apply(sliceObject("shop", "shared", "api", ["10.0.0.1"]));
    await eventually(() => sliceNames(h.watch, "shop", "api").length === 1, 5_000, "relabel seen");
    expect(sliceNames(h.watch, "shop", "web")).toEqual([]);
    expect([...h.changes].sort()).toEqual(["shop/api", "shop/web"]);
  });

  it("fires for a Service when one of its Services changes or is deleted", async () => {
    const h = await setUp((kube) => kube.apply(serviceObject("shop", "web")));
    await h.watch.start();
    h.changes.length = 0;
    h.kube.apply(serviceObject("shop", "web", { "edgeslice.io/hosts": "a.example" }));
    await eventually(() => h.changes.length === 1, 5_000, "service update");
    h.kube.remove("Service", "shop", "web");
    await eventually(() => h.watch.service("shop", "web") === undefined, 5_000, "service delete");
    expect(h.changes).toEqual(["shop/web", "shop/web"]);
  });

  it("sees only the namespaces it was told to watch", async () => {
    const h = await setUp(
      (kube) => {
        kube.apply(serviceObject("shop", "web"));
        kube.apply(serviceObject("blog", "api"));
        kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
        kube.apply(sliceObject("blog", "api-a", "api", ["10.0.0.2"]));
      },
      { namespaces: ["shop", "team"] },
    );
    await h.watch.start();
    h.kube.apply(sliceObject("team", "x-a", "x", ["10.0.0.3"]));
    h.kube.apply(sliceObject("blog", "api-b", "api", ["10.0.0.4"]));
    await eventually(() => sliceNames(h.watch, "team", "x").length === 1, 5_000, "team slice");
    expect(h.watch.services().map((service) => service.metadata.name)).toEqual(["web"]);
    expect(sliceNames(h.watch, "blog", "api")).toEqual([]);
    expect(h.changes).not.toContain("blog/api");
  });

  it("skips and logs an invalid slice while valid ones keep flowing", async () => {
    const h = await setUp((kube) => {
      kube.apply({
        kind: "EndpointSlice",
        metadata: { name: "broken", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
        endpoints: "nope",
      });
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    });
    await h.watch.start();
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a"]);
    const warning = h.logs.find((entry) => entry.message === "skipping invalid EndpointSlice");
    expect(warning?.fields).toMatchObject({ namespace: "shop", name: "broken" });

    // A valid slice that turns invalid leaves the cache (and its Service is recomputed).
    h.changes.length = 0;
    h.kube.apply({ ...sliceObject("shop", "web-a", "web", []), addressType: 4 });
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    await eventually(() => sliceNames(h.watch, "shop", "web").join() === "web-b", 5_000, "valid slice flows");
    expect(h.changes).toEqual(["shop/web", "shop/web"]);
  });

  it("calls onResync periodically once synced", async () => {
    let resyncs = 0;
    const h = await setUp(() => {}, { resyncIntervalMs: 30, onResync: () => (resyncs += 1) });
    await h.watch.start();
    await eventually(() => resyncs >= 2, 5_000, "resyncs");
    await h.watch.stop();
    const afterStop = resyncs;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(resyncs).toBe(afterStop);
  });
});

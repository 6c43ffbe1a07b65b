import { describe, expect, it } from "vitest";
import { sliceObject } from "../../fake-kube/fixtures.js";
import { eventually } from "../../support/eventually.js";
import { cacheMatchesServer, clusterWatches, sliceNames, watching } from "./cluster-watch-kit.js";

describe("the reflector's LIST", () => {
  const { setUp } = clusterWatches();

  it("lists in pages of pageSize, the whole collection in the cache", async () => {
    const h = await setUp(
      (kube) => {
        for (const name of ["a", "b", "c", "d", "e"])
          kube.apply(sliceObject("shop", `web-${name}`, "web", ["10.0.0.1"]));
      },
      { pageSize: 2 },
    );
    await h.watch.start();
    expect(h.kube.requests("list", "EndpointSlice")).toBe(3);
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a", "web-b", "web-c", "web-d", "web-e"]);
  });

  it("on a relist, tells the cache only what changed or vanished meanwhile", async () => {
    const h = await setUp((kube) => {
      for (const service of ["s1", "s2", "s3", "s4"])
        kube.apply(sliceObject("shop", `${service}-a`, service, ["10.0.0.1"]));
    });
    await h.watch.start();
    await watching(h);
    h.changes.length = 0;
    const lists = h.kube.requests("list", "EndpointSlice");

    h.kube.stallWatches();
    h.kube.apply(sliceObject("shop", "s1-a", "s1", ["10.0.0.9"]));
    h.kube.remove("EndpointSlice", "shop", "s2-a");
    h.kube.expireHistory();
    h.kube.dropAllWatches();

    await eventually(() => h.kube.requests("list", "EndpointSlice") > lists, 5_000, "the relist");
    await eventually(() => cacheMatchesServer(h), 5_000, "cache equal to server");
    expect([...new Set(h.changes)].sort()).toEqual(["shop/s1", "shop/s2"]);
  });
});

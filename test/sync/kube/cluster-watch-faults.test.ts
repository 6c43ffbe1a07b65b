import { describe, expect, it } from "vitest";
import { createClusterWatch } from "../../../sync/kube/cluster-watch.js";
import { sliceObject } from "../../fake-kube/fixtures.js";
import { startFakeKube } from "../../fake-kube/server.js";
import { eventually } from "../../support/eventually.js";
import { recordingLogger } from "../../support/loggers.js";
import { cacheMatchesServer, clusterWatches, sliceNames, watching } from "./cluster-watch-kit.js";

describe("cluster watch faults on the reflectors", () => {
  const { setUp, track } = clusterWatches();

  it("restarts after a dropped watch and catches up on changes made while disconnected", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    });
    await h.watch.start();
    await watching(h);
    const listsBefore = h.kube.requests("list");
    const watchesBefore = h.kube.requests("watch", "EndpointSlice");

    h.kube.dropAllWatches();
    h.kube.remove("EndpointSlice", "shop", "web-a");
    h.kube.apply(sliceObject("shop", "web-c", "web", ["10.0.0.3"]));

    await eventually(() => sliceNames(h.watch, "shop", "web").join() === "web-b,web-c", 5_000, "catch-up");
    expect(h.kube.requests("watch", "EndpointSlice")).toBeGreaterThan(watchesBefore);
    // The history still covered the gap, so the informer resumed its watch instead of listing again.
    expect(h.kube.requests("list")).toBe(listsBefore);
    expect(cacheMatchesServer(h)).toBe(true);
  });

  it("resumes a half-dead watch (silent past its timeout plus the grace) from its resourceVersion, without listing", async () => {
    const h = await setUp((kube) => kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"])), {
      watchTimeoutSeconds: 1,
      stallGraceMs: 300,
      random: () => 0,
    });
    await h.watch.start();
    await watching(h);
    const lists = h.kube.requests("list");
    h.kube.stallWatches();
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));

    await eventually(() => sliceNames(h.watch, "shop", "web").length === 2, 5_000, "change after stall");
    expect(h.watch.health().restarts).toBeGreaterThan(0);
    const stalled = h.logs.filter((entry) => entry.message.startsWith("watch stalled"));
    expect(stalled.map((entry) => entry.level)).toContain("info");
    expect(h.logs.filter((entry) => entry.level === "warn" || entry.level === "error")).toEqual([]);
    expect(h.kube.requests("list")).toBe(lists);
  });

  it("resumes quiet watches the server ends at their timeout, with no bookmark, relist or restart", async () => {
    const h = await setUp(() => {}, { watchTimeoutSeconds: 1, stallGraceMs: 300 });
    await h.watch.start();
    const lists = h.kube.requests("list");
    const watches = h.kube.requests("watch");
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    expect(h.watch.health().restarts).toBe(0);
    expect(h.kube.requests("list")).toBe(lists);
    expect(h.kube.requests("watch")).toBeGreaterThanOrEqual(watches + 2);
    expect(h.logs.filter((entry) => entry.level !== "debug" && entry.message !== "informer synced")).toEqual([
      expect.objectContaining({ message: "informers synced" }),
    ]);
  });

  it("relists after a 410 Expired on the watch stream and ends equal to the server, deletions included", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    });
    await h.watch.start();
    await watching(h);
    const slicesListed = h.kube.requests("list", "EndpointSlice");

    h.kube.dropAllWatches();
    h.kube.remove("EndpointSlice", "shop", "web-a");
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.22"]));
    h.kube.apply(sliceObject("shop", "web-c", "web", ["10.0.0.3"]));
    h.kube.expireHistory();

    await eventually(() => h.kube.requests("list", "EndpointSlice") > slicesListed, 5_000, "relist");
    await eventually(() => cacheMatchesServer(h), 5_000, "cache equal to server");
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-b", "web-c"]);
    expect(h.changes.filter((change) => change === "shop/web").length).toBeGreaterThan(2);
  });

  it("relists after the API server answers a watch request with HTTP 410", async () => {
    const h = await setUp((kube) => kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"])));
    await h.watch.start();
    await watching(h);
    const slicesListed = h.kube.requests("list", "EndpointSlice");

    h.kube.failNext(1, 410, { verb: "watch", kind: "EndpointSlice" });
    h.kube.endAllWatches();
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));

    await eventually(() => h.kube.requests("list", "EndpointSlice") > slicesListed, 5_000, "relist");
    await eventually(() => cacheMatchesServer(h), 5_000, "cache equal to server");
  });

  it("lists again after a 410 on the LIST itself", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.failNext(1, 410, { verb: "list", kind: "EndpointSlice" });
    });
    await h.watch.start();
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a"]);
    expect(h.kube.requests("list", "EndpointSlice")).toBe(2);
  });

  it("retries 500s with backoff and syncs once the server recovers", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.failNext(3, 500, { verb: "list", kind: "EndpointSlice" });
    });
    await h.watch.start();
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a"]);
    expect(h.kube.requests("list", "EndpointSlice")).toBe(4);
    expect(h.errors).toHaveLength(3);
    const retries = h.logs.filter((entry) => entry.message === "informer failed");
    expect(retries.map((entry) => entry.fields.attempt)).toEqual([1, 2, 3]);

    await watching(h);
    h.kube.failNext(2, 500, { verb: "watch", kind: "EndpointSlice" });
    h.kube.endAllWatches();
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    await eventually(
      () => sliceNames(h.watch, "shop", "web").length === 2,
      5_000,
      "recovery after watch 500s",
    );
  });

  it("retries brief 401s and 403s quietly, without an RBAC error", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.failNext(2, 401, { verb: "list", kind: "Service" });
      kube.failNext(2, 403, { verb: "list", kind: "EndpointSlice" });
    });
    await h.watch.start();
    const refused = h.logs.filter((entry) => entry.fields.status === 401 || entry.fields.status === 403);
    expect(refused.map((entry) => entry.fields.status).sort()).toEqual([401, 401, 403, 403]);
    expect(refused.map((entry) => entry.level)).toEqual(["debug", "debug", "debug", "debug"]);
    expect(h.logs.filter((entry) => entry.level === "error")).toEqual([]);
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a"]);
    expect(h.watch.health().refused).toEqual([]);
  });

  it("reports a refusal that persists past its bound as an RBAC problem, once, and in health()", async () => {
    const h = await setUp((kube) => kube.failNext(10_000, 403, { verb: "list", kind: "EndpointSlice" }), {
      forbiddenReportMs: 300,
    });
    void h.watch.start().catch(() => {});
    await eventually(() => h.watch.health().refused.length > 0, 5_000, "the refusal reported");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const errors = h.logs.filter((entry) => entry.level === "error");
    expect(errors.map((entry) => [entry.message.includes("not authorised"), entry.fields.status])).toEqual([
      [true, 403],
    ]);
    expect(h.watch.health().refused).toEqual(["endpointslices (all namespaces)"]);
    h.kube.clearFailures();
    await eventually(() => h.watch.synced, 5_000, "synced once allowed");
    expect(h.watch.health().refused).toEqual([]);
  });

  it("never syncs but keeps retrying with a token the server refuses, until stopped", async () => {
    const kube = await startFakeKube();
    const { logger, entries } = recordingLogger();
    const watch = createClusterWatch({
      kubeConfig: kube.kubeConfig({ token: "revoked" }),
      logger,
      retry: { initialMs: 10, maxMs: 50 },
      onServiceChanged: () => {},
    });
    track({ kube, watch, changes: [], errors: [], logs: entries });
    const outcome = watch.start().then(
      () => "synced",
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    const refusals = () => entries.filter((entry) => entry.fields.status === 401).length;
    await eventually(() => refusals() >= 6, 5_000, "repeated refused attempts");
    expect(kube.requests("list")).toBeGreaterThanOrEqual(6);
    expect(watch.synced).toBe(false);
    await watch.stop();
    expect(await outcome).toMatch(/stopped before the first sync/);
  });
});

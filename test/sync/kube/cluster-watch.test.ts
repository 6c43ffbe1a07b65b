import { afterEach, describe, expect, it } from "vitest";
import {
  type ClusterWatch,
  type ClusterWatchOptions,
  createClusterWatch,
} from "../../../sync/kube/cluster-watch.js";
import { eventually, serviceObject, sliceObject } from "../../fake-kube/fixtures.js";
import { type LogEntry, recordingLogger } from "../../fake-kube/recording-logger.js";
import { type FakeKube, type FakeKubeOptions, startFakeKube } from "../../fake-kube/server.js";

interface Harness {
  kube: FakeKube;
  watch: ClusterWatch;
  changes: string[];
  errors: unknown[];
  logs: LogEntry[];
}

const running: Harness[] = [];

afterEach(async () => {
  for (const harness of running.splice(0)) {
    await harness.watch.stop().catch(() => {});
    await harness.kube.close();
  }
});

async function setUp(
  seed: (kube: FakeKube) => void = () => {},
  overrides: Partial<ClusterWatchOptions> = {},
  kubeOptions: FakeKubeOptions = { bookmarkIntervalMs: 50 },
): Promise<Harness> {
  const kube = await startFakeKube(kubeOptions);
  seed(kube);
  const { logger, entries } = recordingLogger();
  const changes: string[] = [];
  const errors: unknown[] = [];
  const watch = createClusterWatch({
    kubeConfig: kube.kubeConfig(),
    logger,
    backoff: { initialMs: 20, maxMs: 200 },
    watchdogMs: 2_000,
    resyncIntervalMs: 0,
    onServiceChanged: (namespace, name) => changes.push(`${namespace}/${name}`),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  const harness = { kube, watch, changes, errors, logs: entries };
  running.push(harness);
  return harness;
}

/** start() resolves once listed; the watches connect right after. */
async function watching(h: Harness, count = 2): Promise<void> {
  await eventually(() => h.kube.openWatches() === count, 5_000, `${count} open watches`);
}

function sliceNames(watch: ClusterWatch, namespace: string, service: string): string[] {
  return watch
    .slicesOf(namespace, service)
    .map((slice) => slice.metadata.name)
    .sort();
}

/** The informer cache and the server agree on every slice (name and resourceVersion). */
function cacheMatchesServer({ kube, watch }: Harness): boolean {
  const onServer = kube
    .list("EndpointSlice")
    .map((slice) => `${slice.metadata.namespace}/${slice.metadata.name}@${slice.metadata.resourceVersion}`)
    .sort();
  const services = new Set(
    kube
      .list("EndpointSlice")
      .map((slice) => `${slice.metadata.namespace}/${slice.metadata.labels?.["kubernetes.io/service-name"]}`),
  );
  const cached = [...services]
    .flatMap((key) => {
      const [namespace = "", name = ""] = key.split("/");
      return watch.slicesOf(namespace, name);
    })
    .map((slice) => `${slice.metadata.namespace}/${slice.metadata.name}@${slice.metadata.resourceVersion}`)
    .sort();
  return JSON.stringify(onServer) === JSON.stringify(cached);
}

describe("cluster watch on the real client-node informers", () => {
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

  it("restarts a stalled watch through the watchdog and sees later changes", async () => {
    const h = await setUp((kube) => kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"])), {
      watchdogMs: 300,
    });
    await h.watch.start();
    await watching(h);
    h.kube.stallWatches();
    h.kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));

    await eventually(() => sliceNames(h.watch, "shop", "web").length === 2, 5_000, "change after stall");
    expect(h.watch.health().restarts).toBeGreaterThan(0);
    expect(h.logs.some((entry) => entry.message.startsWith("watch stalled"))).toBe(true);
  });

  it("does not restart a quiet watch that keeps receiving bookmarks", async () => {
    const h = await setUp(() => {}, { watchdogMs: 300 });
    await h.watch.start();
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(h.watch.health().restarts).toBe(0);
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

  it("keeps retrying on 401 and 403, logging each, without crashing", async () => {
    const h = await setUp((kube) => {
      kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
      kube.failNext(2, 401, { verb: "list", kind: "Service" });
      kube.failNext(2, 403, { verb: "list", kind: "EndpointSlice" });
    });
    await h.watch.start();
    const refused = h.logs.filter(
      (entry) => entry.level === "error" && entry.message.includes("not authorised"),
    );
    expect(refused.map((entry) => entry.fields.status).sort()).toEqual([401, 401, 403, 403]);
    expect(sliceNames(h.watch, "shop", "web")).toEqual(["web-a"]);
  });

  it("never syncs but keeps retrying with a token the server refuses, until stopped", async () => {
    const kube = await startFakeKube();
    const { logger, entries } = recordingLogger();
    const watch = createClusterWatch({
      kubeConfig: kube.kubeConfig({ token: "revoked" }),
      logger,
      backoff: { initialMs: 10, maxMs: 50 },
      onServiceChanged: () => {},
    });
    running.push({ kube, watch, changes: [], errors: [], logs: entries });
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

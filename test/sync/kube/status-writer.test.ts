import { afterEach, describe, expect, it } from "vitest";
import type { RouteKind } from "../../../sync/kube/kinds.js";
import { createKubeApi } from "../../../sync/kube/kube-api.js";
import { createStatusWriter, type StatusWriterOptions } from "../../../sync/kube/status-writer.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import type { DesiredRoutes } from "../../../sync/translate/desired-routes.js";
import { condition, type RouteParentStatus } from "../../../sync/translate/gateway/conditions.js";
import { type FakeKube, startFakeKube } from "../../fake-kube/server.js";
import { eventually } from "../../support/eventually.js";
import { recordingLogger } from "../../support/loggers.js";

const OURS = "edgeslice.io/gateway-controller";
const GATEWAY_API = "gateway.networking.k8s.io/v1";

/** Our entry toward Gateway infra/gw, ResolvedRefs as given. */
function ourParent(resolved: boolean): RouteParentStatus {
  return {
    parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "infra", name: "gw" },
    controllerName: OURS,
    conditions: [
      condition("Accepted", true, "Accepted", "accepted", 1),
      resolved
        ? condition("ResolvedRefs", true, "ResolvedRefs", "resolved", 1)
        : condition("ResolvedRefs", false, "BackendNotFound", "Service shop/nope not found", 1),
    ],
  };
}

/** What another controller (attached to its own Gateway) keeps in the same route's status.parents. */
const FOREIGN_PARENT = {
  parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "infra", name: "theirs" },
  controllerName: "example.com/other-controller",
  conditions: [
    {
      type: "Accepted",
      status: "True",
      reason: "Accepted",
      message: "theirs",
      lastTransitionTime: "2024-01-01T00:00:00Z",
    },
  ],
};

function statusesOf(routes: Record<string, readonly RouteParentStatus[]>): DesiredRoutes["statuses"] {
  return {
    gatewayClasses: new Map(),
    gateways: new Map(),
    httpRoutes: new Map(Object.entries(routes)),
    ingresses: new Map(),
  };
}

type Parents = { controllerName: string; conditions: { type: string; reason: string }[] }[];

describe("status writer on the fake API server", () => {
  let kube: FakeKube | undefined;
  afterEach(async () => {
    await kube?.close();
    kube = undefined;
  });

  const setUp = async (options: Partial<StatusWriterOptions> = {}, status?: object) => {
    kube = await startFakeKube();
    const started = kube;
    started.apply({
      apiVersion: GATEWAY_API,
      kind: "HTTPRoute",
      metadata: { name: "web", namespace: "shop" },
      spec: {
        parentRefs: [
          { name: "gw", namespace: "infra" },
          { name: "theirs", namespace: "infra" },
        ],
      },
      ...(status === undefined ? {} : { status }),
    });
    const { logger, entries } = recordingLogger();
    const metrics = createSyncMetrics({ cluster: "east" });
    const writer = createStatusWriter({
      api: createKubeApi(started.kubeConfig()),
      cached: (kind: RouteKind, namespace, name) =>
        kind === "HTTPRoute" ? started.get("HTTPRoute", namespace ?? "", name) : undefined,
      controllerName: OURS,
      logger,
      metrics,
      retryMs: 50,
      ...options,
    });
    const parents = () =>
      (started.get("HTTPRoute", "shop", "web")?.status as { parents?: Parents } | undefined)?.parents ?? [];
    return { kube: started, writer, parents, logs: entries };
  };

  it("writes our status.parents entry after another controller's, and nothing when asked again for the same", async () => {
    const { kube, writer, parents } = await setUp({}, { parents: [FOREIGN_PARENT] });
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(parents().map((entry) => entry.controllerName)).toEqual([FOREIGN_PARENT.controllerName, OURS]);
    expect(parents()[0]).toEqual(FOREIGN_PARENT);
    const written = kube.get("HTTPRoute", "shop", "web");

    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(kube.requests("status", "HTTPRoute")).toBe(1);
    expect(kube.get("HTTPRoute", "shop", "web")?.metadata.resourceVersion).toBe(
      written?.metadata.resourceVersion,
    );
    await writer.stop();
  });

  it("on a 409 re-reads the object and merges into what another controller wrote meanwhile", async () => {
    const { kube, writer, parents } = await setUp();
    const stale = kube.get("HTTPRoute", "shop", "web");
    if (!stale) throw new Error("not seeded");
    kube.apply({ ...stale, status: { parents: [FOREIGN_PARENT] } });
    const lagging = await setUpLagging(kube, stale);

    lagging.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await lagging.idle();
    expect(kube.requests("status", "HTTPRoute")).toBe(2);
    expect(parents().map((entry) => entry.controllerName)).toEqual([FOREIGN_PARENT.controllerName, OURS]);
    await Promise.all([writer.stop(), lagging.stop()]);
  });

  it("removes our entry when no parent of the route is ours any more, keeping the others'", async () => {
    const { writer, parents } = await setUp({}, { parents: [FOREIGN_PARENT] });
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    writer.update(statusesOf({ "shop/web": [] }));
    await writer.idle();
    expect(parents()).toEqual([FOREIGN_PARENT]);
    await writer.stop();
  });

  it("writes nothing while this replica does not publish, and everything once it does", async () => {
    let publishing = false;
    const { kube, writer, parents } = await setUp({ allowed: () => publishing });
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(kube.requests("status")).toBe(0);

    publishing = true;
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(parents().map((entry) => entry.controllerName)).toEqual([OURS]);
    await writer.stop();
  });

  it("retries a write the API server failed, counting the error", async () => {
    const metrics = createSyncMetrics({ cluster: "east" });
    const { kube, writer, parents } = await setUp({ metrics });
    kube.failNext(1, 500, { verb: "status" });
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await eventually(() => parents().length === 1, 2_000, "the status written by the retry");
    expect(kube.requests("status", "HTTPRoute")).toBe(2);
    expect(metrics.render()).toMatch(/edgeslice_sync_status_errors_total\{[^}]*\} 1/);
    await writer.stop();
  });

  it("retries a failed write later, and a newer status given meanwhile is the one that stays", async () => {
    const { kube, writer, parents, logs } = await setUp();
    kube.failNext(1, 500, { verb: "status" });
    writer.update(statusesOf({ "shop/web": [ourParent(false)] }));
    await writer.idle();
    expect(logs.some((entry) => entry.message === "status write failed")).toBe(true);

    // Before the retry (50 ms) is due, the route resolves: the retry must not bring the older status back.
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await writer.idle();
    const resolved = parents()[0]?.conditions.find((item) => item.type === "ResolvedRefs");
    expect(resolved?.reason).toBe("ResolvedRefs");
    expect(kube.requests("status", "HTTPRoute")).toBe(2);
    await writer.stop();
  });

  it("forgets what it wrote to a route that is no longer ours", async () => {
    const { writer } = await setUp();
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(writer.remembered()).toBe(1);
    writer.update(statusesOf({}));
    await writer.idle();
    expect(writer.remembered()).toBe(0);
    await writer.stop();
  });

  it("forgets what it wrote to a route that left the cache, and writes a route re-created under that name", async () => {
    const { kube, writer, parents } = await setUp();
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    const created = kube.get("HTTPRoute", "shop", "web");
    if (!created) throw new Error("not seeded");
    kube.remove("HTTPRoute", "shop", "web");
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(writer.remembered()).toBe(0);

    kube.apply({ ...created, metadata: { name: "web", namespace: "shop" }, status: {} });
    writer.update(statusesOf({ "shop/web": [ourParent(true)] }));
    await writer.idle();
    expect(parents().map((entry) => entry.controllerName)).toEqual([OURS]);
    expect(writer.remembered()).toBe(1);
    await writer.stop();
  });
});

/** A writer whose cache still holds `stale` (an older resourceVersion): its first write gets a 409. */
async function setUpLagging(kube: FakeKube, stale: object) {
  return createStatusWriter({
    api: createKubeApi(kube.kubeConfig()),
    cached: () => stale,
    controllerName: OURS,
    logger: recordingLogger().logger,
    metrics: createSyncMetrics({ cluster: "east" }),
  });
}

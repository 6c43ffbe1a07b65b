import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serviceObject, sliceObject } from "./fixtures.js";
import { type FakeKube, startFakeKube } from "./server.js";
import { openWatch, type WatchReader } from "./watch-reader.js";

let kube: FakeKube;
let readers: WatchReader[] = [];

beforeEach(async () => {
  kube = await startFakeKube({ bookmarkIntervalMs: 50, historyLimit: 100 });
  readers = [];
});

afterEach(async () => {
  for (const reader of readers) reader.close();
  await kube.close();
});

async function get(path: string, token = kube.token): Promise<Response> {
  return fetch(`${kube.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

async function send(method: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${kube.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${kube.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function watch(path: string): Promise<WatchReader> {
  const reader = await openWatch(`${kube.url}${path}`, kube.token);
  readers.push(reader);
  return reader;
}

const SLICES = "/apis/discovery.k8s.io/v1/endpointslices";
const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

describe("fake Kubernetes API server", () => {
  it("lists with a list kind and one global resourceVersion across kinds", async () => {
    kube.apply(serviceObject("shop", "web"));
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    kube.apply(serviceObject("blog", "api"));

    const services = (await (await get("/api/v1/services")).json()) as {
      kind: string;
      apiVersion: string;
      metadata: { resourceVersion: string };
      items: { metadata: { name: string; namespace: string; resourceVersion: string } }[];
    };
    expect(services.kind).toBe("ServiceList");
    expect(services.apiVersion).toBe("v1");
    expect(services.metadata.resourceVersion).toBe(kube.resourceVersion);
    expect(services.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`)).toEqual([
      "shop/web",
      "blog/api",
    ]);
    expect(Number(services.items[1]?.metadata.resourceVersion)).toBeGreaterThan(
      Number(services.items[0]?.metadata.resourceVersion),
    );

    const slices = (await (await get("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices")).json()) as {
      kind: string;
      items: unknown[];
    };
    expect(slices.kind).toBe("EndpointSliceList");
    expect(slices.items).toHaveLength(1);
    const otherNamespace = (await (await get("/api/v1/namespaces/shop/services")).json()) as {
      items: unknown[];
    };
    expect(otherNamespace.items).toHaveLength(1);
  });

  it("refuses a request without the bearer token with a 401 Status", async () => {
    const response = await get("/api/v1/services", "wrong");
    expect(response.status).toBe(401);
    expect(((await response.json()) as { reason: string }).reason).toBe("Unauthorized");
  });

  it("honours an equality label selector on list", async () => {
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    kube.apply(sliceObject("shop", "api-a", "api", ["10.0.0.2"]));
    const selector = encodeURIComponent("kubernetes.io/service-name=api");
    const list = (await (await get(`${SLICES}?labelSelector=${selector}`)).json()) as {
      items: { metadata: { name: string } }[];
    };
    expect(list.items.map((item) => item.metadata.name)).toEqual(["api-a"]);
  });

  it("streams a watch as chunked JSON lines: replay after the resourceVersion, then live events", async () => {
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    const from = kube.resourceVersion;
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.9"]));

    const reader = await watch(`${SLICES}?watch=true&resourceVersion=${from}`);
    expect(reader.status).toBe(200);
    expect(reader.headers.get("transfer-encoding")).toBe("chunked");
    const replayed = await reader.read((line) => line.type === "MODIFIED");
    expect(replayed.map((line) => line.type)).toEqual(["MODIFIED"]);

    kube.apply(sliceObject("shop", "web-b", "web", ["10.0.0.2"]));
    kube.remove("EndpointSlice", "shop", "web-a");
    const live = await reader.read((line) => line.type === "DELETED");
    expect(live.map((line) => `${line.type} ${line.object.metadata?.name}`)).toEqual([
      "ADDED web-b",
      "DELETED web-a",
    ]);
    expect(live[1]?.object.metadata?.resourceVersion).toBe(kube.resourceVersion);
  });

  it("sends BOOKMARKs carrying its resource type's latest resourceVersion once that type had an event", async () => {
    const reader = await watch(
      `${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}&allowWatchBookmarks=true`,
    );
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    const sliceVersion = kube.resourceVersion;
    kube.apply(serviceObject("shop", "web"));
    const lines = await reader.read((line) => line.type === "BOOKMARK");
    expect(lines.map((line) => line.type)).toEqual(["ADDED", "BOOKMARK"]);
    expect(lines.at(-1)?.object.metadata?.resourceVersion).toBe(sliceVersion);
  });

  it("sends no BOOKMARK to a watch whose resource type had no event since it started, as kube-apiserver", async () => {
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    const reader = await watch(
      `${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}&allowWatchBookmarks=true`,
    );
    kube.apply(serviceObject("shop", "web"));
    await expect(reader.read(() => true, 400)).rejects.toThrow(/no matching watch line/);
  });

  it("sends no BOOKMARK to a watch that did not ask", async () => {
    const reader = await watch(`${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    const lines = await reader.read(() => true);
    expect(lines.map((line) => line.type)).toEqual(["ADDED"]);
  });

  it("answers a watch from a compacted resourceVersion with an ERROR 410 Expired event and ends the stream", async () => {
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    const old = kube.resourceVersion;
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.2"]));
    kube.expireHistory();

    const reader = await watch(`${SLICES}?watch=true&resourceVersion=${old}`);
    const lines = await reader.read(() => false);
    expect(lines).toEqual([
      { type: "ERROR", object: expect.objectContaining({ kind: "Status", code: 410, reason: "Expired" }) },
    ]);
  });

  it("fails the next matching requests with an injected HTTP status, then recovers", async () => {
    kube.failNext(2, 410, { verb: "list", kind: "Service" });
    expect((await get("/api/v1/services")).status).toBe(410);
    expect((await get(SLICES)).status).toBe(200);
    expect((await get("/api/v1/services")).status).toBe(410);
    expect((await get("/api/v1/services")).status).toBe(200);
    expect(kube.requests("list", "Service")).toBe(3);
    expect(kube.requests("list")).toBe(4);
  });

  it("drops open watch sockets and counts watch requests", async () => {
    const reader = await watch(`${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}`);
    expect(kube.openWatches("EndpointSlice")).toBe(1);
    kube.dropAllWatches();
    await expect(reader.read(() => false)).rejects.toThrow();
    expect(kube.requests("watch", "EndpointSlice")).toBe(1);
  });

  it("keeps a stalled watch open but sends it nothing", async () => {
    const reader = await watch(
      `${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}&allowWatchBookmarks=true`,
    );
    kube.stallWatches();
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    await expect(reader.read(() => true, 300)).rejects.toThrow(/no matching watch line/);
    expect(kube.openWatches()).toBe(1);
  });

  it("creates, conflicts and replaces Leases with resourceVersion concurrency", async () => {
    const lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "edgeslice" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 1, renewTime: "2026-01-01T00:00:00.000000Z" },
    };
    const created = await send("POST", LEASES, lease);
    expect(created.status).toBe(201);
    const stored = (await created.json()) as { metadata: { resourceVersion: string; namespace: string } };
    expect(stored.metadata.namespace).toBe("kube-system");
    expect((await send("POST", LEASES, lease)).status).toBe(409);

    const renewed = {
      ...lease,
      metadata: { name: "edgeslice", resourceVersion: stored.metadata.resourceVersion },
    };
    expect((await send("PUT", `${LEASES}/edgeslice`, renewed)).status).toBe(200);
    const stale = await send("PUT", `${LEASES}/edgeslice`, renewed);
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { reason: string }).reason).toBe("Conflict");

    expect((await get(`${LEASES}/edgeslice`)).status).toBe(200);
    expect((await get(`${LEASES}/missing`)).status).toBe(404);
  });

  it("rejects a Lease time that is not a MicroTime", async () => {
    const response = await send("POST", LEASES, {
      kind: "Lease",
      metadata: { name: "edgeslice" },
      spec: { renewTime: "2026-01-01T00:00:00.000Z" },
    });
    expect(response.status).toBe(400);
  });
});

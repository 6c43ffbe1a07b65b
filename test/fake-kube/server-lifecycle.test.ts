import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { sliceObject } from "./fixtures.js";
import { type FakeKube, startFakeKube } from "./server.js";
import { openWatch, type WatchReader } from "./watch-reader.js";

const SLICES = "/apis/discovery.k8s.io/v1/endpointslices";

describe("the fake API server's pages, start-up refusals and shutdown, as kube-apiserver's", () => {
  let kube: FakeKube;
  const readers: WatchReader[] = [];
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await kube.close();
  });

  // A fresh connection each time: a pooled one may be one that stop() cut.
  const get = (path: string) =>
    fetch(`${kube.url}${path}`, { headers: { authorization: `Bearer ${kube.token}`, connection: "close" } });
  const watch = async (path: string) => {
    const reader = await openWatch(`${kube.url}${path}`, kube.token);
    readers.push(reader);
    return reader;
  };
  interface Page {
    metadata: { resourceVersion: string; continue?: string };
    items: { metadata: { name: string } }[];
  }

  it("pages a LIST with limit and continue, every page as the collection was at the first page's resourceVersion", async () => {
    kube = await startFakeKube();
    for (const name of ["a", "b", "c", "d", "e"]) kube.apply(sliceObject("shop", name, "web", ["10.0.0.1"]));
    const listed = kube.resourceVersion;
    const first = (await (await get(`${SLICES}?limit=2`)).json()) as Page;
    expect(first.items.map((item) => item.metadata.name)).toEqual(["a", "b"]);
    // Changed between pages: an addition, a deletion and an update, which no page shows.
    kube.apply(sliceObject("shop", "f", "web", ["10.0.0.1"]));
    kube.remove("EndpointSlice", "shop", "d");
    kube.apply(sliceObject("shop", "c", "web", ["10.0.0.9"]));
    const second = (await (
      await get(`${SLICES}?limit=2&continue=${first.metadata.continue}`)
    ).json()) as Page;
    const third = (await (
      await get(`${SLICES}?limit=2&continue=${second.metadata.continue}`)
    ).json()) as Page;
    expect([...second.items, ...third.items].map((item) => item.metadata.name)).toEqual(["c", "d", "e"]);
    expect(JSON.stringify(second.items[0])).toContain("10.0.0.1");
    expect([first, second, third].map((page) => page.metadata.resourceVersion)).toEqual([
      listed,
      listed,
      listed,
    ]);
    expect(third.metadata.continue).toBeUndefined();
  });

  it("answers a continue token older than the compacted history with 410 Expired", async () => {
    kube = await startFakeKube();
    for (const name of ["a", "b", "c"]) kube.apply(sliceObject("shop", name, "web", ["10.0.0.1"]));
    const first = (await (await get(`${SLICES}?limit=1`)).json()) as Page;
    kube.apply(sliceObject("shop", "a", "web", ["10.0.0.2"]));
    kube.expireHistory();
    const expired = await get(`${SLICES}?limit=1&continue=${first.metadata.continue}`);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
  });

  it("answers 403 for a while after it starts and restarts, then serves", async () => {
    // Bounds wide enough for a loaded machine: the first request must land inside the window.
    kube = await startFakeKube({ forbiddenForMs: 1_500 });
    expect((await get(SLICES)).status).toBe(403);
    await eventually(async () => (await get(SLICES)).status === 200, 5_000, "served after the window");
    await kube.stop();
    await kube.restart({ forbiddenForMs: 1_500 });
    expect((await get(SLICES)).status).toBe(403);
  });

  it("on stop refuses new connections and holds open watches silent, then cuts them; restart serves the same URL", async () => {
    kube = await startFakeKube({ bookmarkIntervalMs: 20 });
    const reader = await watch(
      `${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}&timeoutSeconds=1`,
    );
    await kube.stop({ holdWatchesMs: 1_500 });
    expect(kube.running).toBe(false);
    await expect(get(SLICES)).rejects.toThrow();
    kube.apply(sliceObject("shop", "web-a", "web", ["10.0.0.1"]));
    // Silent past its own timeout: a held watch neither gets events nor ends.
    await expect(reader.read(() => true, 1_200)).rejects.toThrow(/no matching watch line/);
    await expect(reader.read(() => true, 2_000)).rejects.toThrow(/terminated|aborted|closed|socket/i);

    await kube.restart();
    const list = (await (await get(SLICES)).json()) as Page;
    expect(list.items.map((item) => item.metadata.name)).toEqual(["web-a"]);
  });

  it("keeps a stalled watch open past its timeout, as a half-dead connection", async () => {
    kube = await startFakeKube();
    const reader = await watch(
      `${SLICES}?watch=true&resourceVersion=${kube.resourceVersion}&timeoutSeconds=1`,
    );
    kube.stallWatches();
    await expect(reader.read(() => true, 1_500)).rejects.toThrow(/no matching watch line/);
    expect(kube.openWatches()).toBe(1);
  });
});

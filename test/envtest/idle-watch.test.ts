import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENVTEST_AVAILABLE, type Envtest, startEnvtest, untilAllowed } from "../support/envtest.js";
import { pollUntil } from "../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { renderDeploy } from "./support/deploy.js";
import { exposedWithSlice, namespaceObject } from "./support/objects.js";
import { published } from "./support/store.js";
import { type SyncCli, startSyncCli, untilReady } from "./support/sync-cli.js";

/**
 * Each watch asks the server to end it after [2, 4) s; one silent for its timeout plus 1 s is half-dead.
 * The stall bound is thus at most 5 s, and the idle period three times that.
 */
const WATCH = { WATCH_TIMEOUT_SECONDS: "2", WATCH_STALL_GRACE_MS: "1000" };
const IDLE_MS = 3 * (2 * 2_000 + 1_000);

/**
 * kube-apiserver sends BOOKMARKs only to watches of a resource type that had an event since the watch
 * started, so on an idle cluster no watch gets any: the watches must simply end at their timeout and resume
 * from their resourceVersion, never list again. LISTs are counted by the apiserver itself
 * (apiserver_request_total), which names no client: EndpointSlices are listed by nothing else here (no
 * controllers run), and the namespaced sync's Service LISTs are the only namespace-scoped ones (the
 * apiserver's own repair loop lists Services cluster-wide every 180 s), so both counts are exactly the syncs'.
 */
describe.skipIf(!ENVTEST_AVAILABLE)("an idle cluster (no change, hence no bookmark)", () => {
  let envtest: Envtest;
  const syncs: SyncCli[] = [];
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = uniquePrefix("envtest-idle");

  beforeAll(async () => {
    const deploy = await renderDeploy();
    envtest = await startEnvtest({ serviceAccount: deploy.serviceAccount });
    await envtest.apply([
      ...deploy.objects,
      namespaceObject("shop"),
      namespaceObject("blog"),
      ...exposedWithSlice("shop", "web", ["10.7.0.1"]),
      ...exposedWithSlice("blog", "posts", ["10.7.0.2"]),
    ]);
    await untilAllowed(envtest, "/apis/discovery.k8s.io/v1/endpointslices");
    await untilAllowed(envtest, "/api/v1/services");
  });
  afterAll(async () => {
    await Promise.all(syncs.map((sync) => sync.kill()));
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await envtest?.close();
  });

  const start = async (cluster: string, env: Record<string, string>) => {
    const sync = await startSyncCli({
      envtest,
      cluster,
      prefix,
      podName: `${cluster}-0`,
      env: { ...WATCH, ...env },
    });
    syncs.push(sync);
    await untilReady(sync);
    await pollUntil(async () => (await published(redis, prefix, cluster)).services.size === 2, {
      timeoutMs: 15_000,
      describe: () => `${cluster} did not publish both Services`,
    });
    return sync;
  };

  it("resumes every watch the server ends, with no LIST, no stall and nothing logged above info, for three stall bounds", async () => {
    const everywhere = await start("east", {});
    const namespaced = await start("west", { WATCH_NAMESPACES: "shop,blog" });
    const counts = async () => ({
      sliceLists: await envtest.requestCount("LIST", "endpointslices"),
      namespacedServiceLists: await envtest.requestCount("LIST", "services", "namespace"),
      watchesEnded:
        (await envtest.requestCount("WATCH", "endpointslices")) +
        (await envtest.requestCount("WATCH", "services")),
    });
    const before = await counts();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const after = await counts();

    expect(after.sliceLists - before.sliceLists).toBe(0);
    expect(after.namespacedServiceLists - before.namespacedServiceLists).toBe(0);
    // Six watches (two, and two per namespace) each ended and resumed at least twice.
    expect(after.watchesEnded - before.watchesEnded).toBeGreaterThanOrEqual(12);
    for (const sync of [everywhere, namespaced]) {
      expect(await sync.metric("edgeslice_sync_relists_total")).toBeUndefined();
      expect(sync.logged("watch stalled")).toEqual([]);
      expect(sync.logs.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
    }
    const restarts = (await (await fetch(`${everywhere.healthUrl}/metrics`)).text())
      .split("\n")
      .filter((line) => line.startsWith("edgeslice_sync_watch_restarts_total{"));
    expect(restarts.length).toBeGreaterThan(0);
    expect(restarts.every((line) => line.includes('reason="timeout"'))).toBe(true);
  }, 60_000);
});

import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { untilAllowed } from "../../support/envtest.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { namespacedReadRbac, renderDeploy, withoutClusterRbac } from "../support/deploy.js";
import { exposedWithSlice, namespaceObject, sliceObject } from "../support/objects.js";
import { published, publishedAddresses } from "../support/store.js";
import { type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

/** WATCH_NAMESPACES with the read rules as Roles in those namespaces only. */
export function describeNamespacedContract(plane: ControlPlaneKind): void {
  describeOn(plane, "the namespaced mode (WATCH_NAMESPACES) with Roles only", () => {
    let controlPlane: ControlPlane;
    let sync: SyncCli | undefined;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-ns");

    beforeAll(async () => {
      const deploy = await renderDeploy();
      controlPlane = await plane.start({ serviceAccount: deploy.serviceAccount });
      await controlPlane.apply([
        ...withoutClusterRbac(deploy),
        namespaceObject("shop"),
        namespaceObject("blog"),
        namespaceObject("other"),
        ...namespacedReadRbac(deploy, ["shop", "blog"]),
        ...exposedWithSlice("shop", "web", ["10.2.0.1"]),
        ...exposedWithSlice("blog", "posts", ["10.2.0.2"]),
        ...exposedWithSlice("other", "hidden", ["10.2.0.3"]),
      ]);
      await untilAllowed(controlPlane, "/api/v1/namespaces/shop/services");
      await untilAllowed(controlPlane, "/apis/discovery.k8s.io/v1/namespaces/blog/endpointslices");
    });
    afterAll(async () => {
      await sync?.kill();
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    it("publishes the watched namespaces only, follows their changes, and is never refused", async () => {
      // Roles only: nothing cluster-wide is readable, which is what makes WATCH_NAMESPACES necessary.
      expect((await controlPlane.get("/api/v1/services", "sync")).status).toBe(403);
      expect((await controlPlane.get("/api/v1/namespaces/other/services", "sync")).status).toBe(403);

      sync = await startSyncCli({
        controlPlane,
        cluster: "east",
        prefix,
        podName: "east-0",
        env: { WATCH_NAMESPACES: "shop,blog" },
      });
      await untilReady(sync);
      await untilLeader(sync, 1);
      await pollUntil(async () => (await published(redis, prefix, "east")).services.size === 2, {
        timeoutMs: 15_000,
        describe: () => "shop/web and blog/posts were not published",
      });

      await controlPlane.apply(sliceObject("blog", "posts", ["10.2.0.2", "10.2.0.4"]));
      await pollUntil(
        async () =>
          JSON.stringify(await publishedAddresses(redis, prefix, "east", "blog/posts")) ===
          JSON.stringify(["10.2.0.2", "10.2.0.4"]),
        { timeoutMs: 10_000, describe: () => "the new blog/posts endpoint was not published" },
      );
      await controlPlane.apply(sliceObject("other", "hidden", ["10.2.0.3", "10.2.0.5"]));

      const view = await published(redis, prefix, "east");
      expect([...view.services.keys()].sort()).toEqual(["blog/posts", "shop/web"]);
      expect(sync.logged("not authorised")).toEqual([]);
      expect(sync.logged("informer failed")).toEqual([]);
      expect(sync.logged("lease request failed")).toEqual([]);
    });
  });
}

import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { startDeployedPlane } from "../support/deployed-plane.js";
import { exposedWithSlice, namespaceObject, sliceObject } from "../support/objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilReady } from "../support/sync-cli.js";

/**
 * A watch resumed from a compacted revision gets 410 Gone
 * (https://kubernetes.io/docs/reference/using-api/api-concepts/#410-gone-responses); on a real apiserver that
 * needs the watch cache off, so every watch goes to etcd. The changes the sync must catch up on are made
 * through a peer apiserver while its own is down, as in an HA control plane.
 */
export function describeWatchGoneContract(plane: ControlPlaneKind): void {
  describeOn(plane, "a watch that expired (410 Gone after an etcd compaction)", () => {
    let controlPlane: ControlPlane;
    let sync: SyncCli | undefined;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-gone");

    beforeAll(async () => {
      controlPlane = await startDeployedPlane(
        plane,
        [
          namespaceObject("shop"),
          ...exposedWithSlice("shop", "kept", ["10.4.0.1"]),
          ...exposedWithSlice("shop", "removed", ["10.4.0.2"]),
          ...exposedWithSlice("shop", "changed", ["10.4.0.3"]),
        ],
        { watchCache: false },
      );
    });
    afterAll(async () => {
      await sync?.kill();
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    const publishedState = async () => {
      const view = await published(redis, prefix, "east");
      return Object.fromEntries(
        [...view.services]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([service, record]) => [
            service,
            (record.ports[0]?.ipv4.endpoints ?? []).map((endpoint) => endpoint.ip).sort(),
          ]),
      );
    };

    it("relists and publishes exactly the cluster's state: a deletion, an addition and a change it never saw as events", async () => {
      sync = await startSyncCli({ controlPlane, cluster: "east", prefix, podName: "east-0" });
      await untilReady(sync);
      await pollUntil(async () => Object.keys(await publishedState()).length === 3, {
        timeoutMs: 15_000,
        describe: () => "the three Services were not published",
      });

      await controlPlane.stopApiserver();
      const peer = await controlPlane.startPeer();
      await peer.remove("service", "shop", "removed");
      await peer.remove("endpointslice", "shop", "removed-a");
      await peer.apply([
        ...exposedWithSlice("shop", "added", ["10.4.0.4"]),
        sliceObject("shop", "changed", ["10.4.0.5"]),
      ]);
      await controlPlane.compact();
      await peer.stop();
      await controlPlane.startApiserver();

      // The informers' backoff grew while the apiserver was away (up to 30 s, jittered): allow for it.
      const expected = {
        "shop/added": ["10.4.0.4"],
        "shop/changed": ["10.4.0.5"],
        "shop/kept": ["10.4.0.1"],
      };
      await pollUntil(async () => JSON.stringify(await publishedState()) === JSON.stringify(expected), {
        timeoutMs: 60_000,
        describe: () => `the sync did not catch up after the 410: ${JSON.stringify(sync?.logs.slice(-10))}`,
      });
      // Caught up by listing again: the restarted apiserver (its counters new) served LISTs of both resources.
      expect(await controlPlane.requestCount("LIST", "services")).toBeGreaterThan(0);
      expect(await controlPlane.requestCount("LIST", "endpointslices")).toBeGreaterThan(0);
      expect((await sync.readyz()).status).toBe(200);
    }, 120_000);
  });
}

import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildRouteIndex, lookupRoute } from "../../../functions/core/snapshot/route-index.js";
import { silentLogger } from "../../../lib/logger.js";
import { loadSnapshot } from "../../../store/redis/snapshot.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { startDeployedPlane } from "../support/deployed-plane.js";
import { exposedWithSlice, namespaceObject } from "../support/objects.js";
import { published } from "../support/store.js";
import { type SyncCli, startSyncCli, untilReady } from "../support/sync-cli.js";

const NAMESPACES = ["ns-a", "ns-b", "ns-c"];
/** Per namespace, before the sync starts (the first LIST) and while it runs (WATCH events). */
const PER_NAMESPACE = 50;

function batch(from: number): object[] {
  return NAMESPACES.flatMap((namespace, n) =>
    Array.from({ length: PER_NAMESPACE }, (_, i) =>
      exposedWithSlice(namespace, `svc-${from + i}`, [
        `10.${10 + n}.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 1}`,
      ]),
    ).flat(),
  );
}

/** Three namespaces of Services, half listed at start and half added while the sync runs. */
export function describeManyServicesContract(plane: ControlPlaneKind): void {
  describeOn(plane, "a few hundred Services", () => {
    let controlPlane: ControlPlane;
    let sync: SyncCli | undefined;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-many");

    beforeAll(async () => {
      controlPlane = await startDeployedPlane(plane, NAMESPACES.map(namespaceObject));
      await controlPlane.apply(batch(0));
    });
    afterAll(async () => {
      await sync?.kill();
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    it("publishes every Service, listed at start and added while running, each routable by its host", async () => {
      sync = await startSyncCli({ controlPlane, cluster: "east", prefix, podName: "east-0" });
      await untilReady(sync);
      await controlPlane.apply(batch(PER_NAMESPACE));
      // A Service is published as soon as it is seen, its endpoints once its EndpointSlice is: wait for both.
      const unroutable = async () => {
        const index = buildRouteIndex(
          await loadSnapshot(redis, { prefix, logger: silentLogger, version: 1 }),
        );
        return NAMESPACES.flatMap((namespace, n) =>
          Array.from({ length: PER_NAMESPACE * 2 }, (_, i) => {
            const route = lookupRoute(index, `svc-${i}.${namespace}.test`, "/");
            const backend = route?.serving[0]?.record.ipv4.endpoints[0]?.ip;
            return backend === `10.${10 + n}.0.${i + 1}` ? [] : [`${namespace}/svc-${i}: ${backend}`];
          }).flat(),
        );
      };
      let last: string[] = [];
      await pollUntil(
        async () => {
          last = await unroutable();
          return last.length === 0;
        },
        {
          timeoutMs: 60_000,
          describe: () => `${last.length} Services not routable: ${last.slice(0, 10).join(", ")}`,
        },
      );
      expect((await published(redis, prefix, "east")).services.size).toBe(
        NAMESPACES.length * PER_NAMESPACE * 2,
      );
      expect(sync.logged("not authorised")).toEqual([]);
    }, 120_000);
  });
}

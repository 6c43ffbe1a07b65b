import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import { decodeHeartbeatRecord } from "../../../store/records.js";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { startDeployedPlane } from "../support/deployed-plane.js";
import { exposedWithSlice, namespaceObject, sliceObject } from "../support/objects.js";
import { holderRuns, published, publishedAddresses, sampleLease } from "../support/store.js";
import { interleavedLogs, type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

/**
 * Short leases (the proportions config.ts accepts) so an outage of a few seconds is already several times
 * longer than both the Kubernetes Lease and the store lease: long enough that any step-down would show.
 */
const SHORT_LEASES = { LEASE_MS: "3000", HEARTBEAT_MS: "400", LEADER_LEASE_MS: "1000" };
const OUTAGE_MS = 6_000;

/**
 * Each watch asks the server to end it after [1, 2) s; one silent for its timeout plus 1.5 s is half-dead (a
 * grace a busy machine cannot outlast between the server's end of a watch and the sync reading it).
 * The stall bound is thus at most 3.5 s, and the idle period three times that.
 */
const WATCH = { WATCH_TIMEOUT_SECONDS: "1", WATCH_STALL_GRACE_MS: "1500" };
const IDLE_MS = 3 * (2 * 1_000 + 1_500);

/** An idle control plane (watches ending at their timeout), then one gone for longer than every lease. */
export function describeControlPlaneOutageContract(plane: ControlPlaneKind): void {
  describeOn(plane, "the control plane quiet, then gone for longer than every lease", () => {
    let controlPlane: ControlPlane;
    const syncs: SyncCli[] = [];
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = uniquePrefix("plane-outage");
    const keys = clusterKeys(prefix, "east");

    beforeAll(async () => {
      controlPlane = await startDeployedPlane(plane, [
        namespaceObject("shop"),
        namespaceObject("blog"),
        ...exposedWithSlice("shop", "web", ["10.6.0.1"]),
        ...exposedWithSlice("blog", "posts", ["10.6.0.2"]),
      ]);
    });
    afterAll(async () => {
      await Promise.all(syncs.map((sync) => sync.kill()));
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    const start = async (podName: string, cluster = "east", env: Record<string, string> = SHORT_LEASES) => {
      const sync = await startSyncCli({ controlPlane, cluster, prefix, podName, env });
      syncs.push(sync);
      await untilReady(sync);
      return sync;
    };
    const gauge = (sync: SyncCli, name: string) => sync.metric(name).catch(() => undefined);
    const heartbeat = async () => decodeHeartbeatRecord((await redis.get(keys.heartbeat)) ?? "");

    /**
     * kube-apiserver sends BOOKMARKs only to watches of a resource type that had an event since the watch
     * started, so on an idle cluster no watch gets any: the watches must simply end at their timeout and resume
     * from their resourceVersion, never list again. LISTs are counted by the apiserver itself
     * (apiserver_request_total), which names no client: EndpointSlices are listed by nothing else here (no
     * controllers run), and the namespaced sync's Service LISTs are the only namespace-scoped ones (the
     * apiserver's own repair loops list Services cluster-wide every 180 s), so both counts are exactly the syncs'.
     */
    it("resumes every watch the server ends, with no LIST, no stall and nothing logged above info, for three stall bounds", async () => {
      const everywhere = await start("idle-0", "idle", WATCH);
      const namespaced = await start("idle-ns-0", "idle-ns", { ...WATCH, WATCH_NAMESPACES: "shop,blog" });
      for (const cluster of ["idle", "idle-ns"]) {
        await pollUntil(async () => (await published(redis, prefix, cluster)).services.size === 2, {
          timeoutMs: 15_000,
          describe: () => `${cluster} did not publish both Services`,
        });
      }
      const counts = async () => ({
        sliceLists: await controlPlane.requestCount("LIST", "endpointslices"),
        namespacedServiceLists: await controlPlane.requestCount("LIST", "services", "namespace"),
        watchesEnded:
          (await controlPlane.requestCount("WATCH", "endpointslices")) +
          (await controlPlane.requestCount("WATCH", "services")),
      });
      const before = await counts();
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      const after = await counts();

      expect(after.sliceLists - before.sliceLists).toBe(0);
      expect(after.namespacedServiceLists - before.namespacedServiceLists).toBe(0);
      // Six watches (two, and two per namespace) each ended and resumed at least twice.
      expect(after.watchesEnded - before.watchesEnded).toBeGreaterThanOrEqual(12);
      const restarts = (await (await fetch(`${everywhere.healthUrl}/metrics`)).text())
        .split("\n")
        .filter((line) => line.startsWith("edgeslice_sync_watch_restarts_total{"));
      for (const sync of [everywhere, namespaced]) {
        expect(await sync.metric("edgeslice_sync_relists_total")).toBeUndefined();
        expect(sync.logged("watch stalled")).toEqual([]);
        expect(sync.logs.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
      }
      expect(restarts.length).toBeGreaterThan(0);
      expect(restarts.every((line) => line.includes('reason="timeout"'))).toBe(true);
      await Promise.all([everywhere, namespaced].map((sync) => sync.kill()));
    }, 60_000);

    it("keeps the cluster fresh with its last state from one publishing replica, says since when, and catches up after", async () => {
      const a = await start("east-a");
      await untilLeader(a, 1);
      const b = await start("east-b");
      await pollUntil(
        async () => (await publishedAddresses(redis, prefix, "east", "shop/web")) !== undefined,
        {
          timeoutMs: 15_000,
          describe: () => "shop/web was not published",
        },
      );
      const lease = sampleLease(redis, prefix, "east");
      const both: number[][] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          both.push([
            (await gauge(a, "edgeslice_sync_leader")) ?? 0,
            (await gauge(b, "edgeslice_sync_leader")) ?? 0,
          ]);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();

      const downAt = Date.now();
      await controlPlane.stopApiserver();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      const leader = (await gauge(a, "edgeslice_sync_leader")) === 1 ? a : b;
      const during = await heartbeat();
      const readyz = await leader.readyz();
      const reachable = await gauge(leader, "edgeslice_sync_apiserver_reachable");
      const since = await gauge(leader, "edgeslice_sync_apiserver_unreachable_since_timestamp_seconds");

      await controlPlane.startApiserver();
      await controlPlane.apply(sliceObject("shop", "web", ["10.6.0.1", "10.6.0.2"]));
      await pollUntil(
        async () =>
          (await publishedAddresses(redis, prefix, "east", "shop/web"))?.join() === "10.6.0.1,10.6.0.2",
        { timeoutMs: 15_000, describe: () => "the change after the outage was not published" },
      );
      sampling = false;
      await sampler;
      const runs = holderRuns(await lease.stop());
      const lapses = runs.filter((run) => run.holder === null);
      const around = lapses[0] && { from: lapses[0].from - 4_000, to: lapses[0].to + 1_000, origin: downAt };

      expect(lapses, around && interleavedLogs([a, b], around)).toEqual([]);
      expect(both.filter(([gaugeA, gaugeB]) => gaugeA === 1 && gaugeB === 1)).toEqual([]);
      expect(during).toMatchObject({ ok: true, value: { apiserverUnreachableSince: expect.any(Number) } });
      const unreachableSince = during.ok ? (during.value.apiserverUnreachableSince ?? 0) : 0;
      expect(Math.abs(unreachableSince - downAt)).toBeLessThan(2_000);
      expect(readyz.status).toBe(200);
      expect(JSON.parse(readyz.body)).toMatchObject({
        ready: true,
        publishing: true,
        apiserverUnreachableSince: new Date(unreachableSince).toISOString(),
      });
      expect(reachable).toBe(0);
      expect(since).toBe(Math.floor(unreachableSince / 1000));
      await pollUntil(async () => (await gauge(leader, "edgeslice_sync_apiserver_reachable")) === 1, {
        timeoutMs: 10_000,
        describe: () => "the leader never saw the API server again",
      });
      await pollUntil(
        async () => {
          const after = await heartbeat();
          return after.ok && after.value.apiserverUnreachableSince === undefined;
        },
        { timeoutMs: 5_000, describe: () => "the heartbeat record still says the API server is unreachable" },
      );
    }, 90_000);
  });
}

import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { pollUntil } from "../../support/envtest-process.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type ControlPlane, type ControlPlaneKind, describeOn } from "../control-plane.js";
import { startDeployedPlane } from "../support/deployed-plane.js";
import { exposedWithSlice, namespaceObject, sliceObject } from "../support/objects.js";
import { holderRuns, type LeaseSample, publishedAddresses, sampleLease } from "../support/store.js";
import { type SyncCli, startSyncCli, untilLeader, untilReady } from "../support/sync-cli.js";

/** How long the lease key `<prefix>:{cluster}:lease` was missing: routers saw the cluster stale that long. */
function staleMs(samples: readonly LeaseSample[]): number {
  let total = 0;
  for (const [index, sample] of samples.entries()) {
    const next = samples[index + 1];
    if (sample.holder === null && next) total += next.at - sample.at;
  }
  return total;
}

/** Leader election between two sync CLIs on the control plane's Lease, handover on SIGTERM and SIGKILL. */
export function describeLeaderElectionContract(plane: ControlPlaneKind): void {
  describeOn(plane, "two sync replicas on a coordination.k8s.io Lease", () => {
    let controlPlane: ControlPlane;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefixes: string[] = [];
    let syncs: SyncCli[] = [];

    beforeAll(async () => {
      controlPlane = await startDeployedPlane(plane, [namespaceObject("shop")]);
    });
    afterEach(async () => {
      await Promise.all(syncs.map((sync) => sync.kill()));
      syncs = [];
    });
    afterAll(async () => {
      for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
      await controlPlane?.close();
    });

    /** Replica a leads and publishes shop/<service>; replica b is ready and stands by. Default settings. */
    async function leaderAndStandby(cluster: string, service: string, env?: Record<string, string>) {
      const prefix = uniquePrefix("plane-leader");
      prefixes.push(prefix);
      await controlPlane.apply(exposedWithSlice("shop", service, ["10.3.0.1"]));
      const start = (podName: string) =>
        startSyncCli({ controlPlane, cluster, prefix, podName, ...(env ? { env } : {}) }).then((sync) => {
          syncs.push(sync);
          return sync;
        });
      const a = await start(`${cluster}-a`);
      await untilLeader(a, 1);
      await pollUntil(
        async () => (await publishedAddresses(redis, prefix, cluster, `shop/${service}`)) !== undefined,
        {
          timeoutMs: 15_000,
          describe: () => `shop/${service} was not published`,
        },
      );
      const b = await start(`${cluster}-b`);
      await untilReady(b);
      expect(await b.metric("edgeslice_sync_leader")).toBe(0);
      return { prefix, a, b };
    }

    /** Samples both replicas' leader gauges until stopped; a replica that does not answer counts as 0. */
    function sampleLeaders(replicas: readonly SyncCli[]) {
      const samples: number[][] = [];
      let running = true;
      const loop = (async () => {
        while (running) {
          samples.push(
            await Promise.all(
              replicas.map((sync) =>
                sync.metric("edgeslice_sync_leader").then(
                  (v) => v ?? 0,
                  () => 0,
                ),
              ),
            ),
          );
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      return async () => {
        running = false;
        await loop;
        return samples;
      };
    }

    /** The change the new leader must publish: a second endpoint on the Service. */
    async function newLeaderPublishes(prefix: string, cluster: string, service: string) {
      await controlPlane.apply(sliceObject("shop", service, ["10.3.0.1", "10.3.0.2"]));
      await pollUntil(
        async () =>
          (await publishedAddresses(redis, prefix, cluster, `shop/${service}`))?.join() ===
          "10.3.0.1,10.3.0.2",
        { timeoutMs: 10_000, describe: () => "the change after the handover was not published" },
      );
    }

    /**
     * Long leases (a retry period of 5-6 s, config.ts accepts them) so that a handover within 3 s can only be the
     * standby's fence poll seeing the released fence, never its next retry, however slow the machine is.
     */
    it("hands over on SIGTERM within a fence poll, not a retry period: the leader releases the Lease, then the fence; never both publish", async () => {
      const { prefix, a, b } = await leaderAndStandby("term", "web", {
        LEADER_LEASE_MS: "30000",
        LEASE_MS: "60000",
      });
      const lease = sampleLease(redis, prefix, "term");
      const leaders = sampleLeaders([a, b]);

      const signalledAt = Date.now();
      expect(await a.stop()).toBe(0);
      await untilLeader(b, 1, 15_000);
      await newLeaderPublishes(prefix, "term", "web");

      const gauges = await leaders();
      const runs = holderRuns(await lease.stop());
      expect(runs.map((run) => run.holder).filter((holder) => holder !== null)).toEqual(["term-a", "term-b"]);
      const takenAt = runs.find((run) => run.holder === "term-b")?.from ?? Number.POSITIVE_INFINITY;
      expect(takenAt - signalledAt).toBeLessThan(3_000);
      expect(runs.filter((run) => run.holder === null)).toEqual([]);
      expect(gauges.filter(([gaugeA, gaugeB]) => gaugeA === 1 && gaugeB === 1)).toEqual([]);
      expect(a.logged("could not release the lease")).toEqual([]);
      expect(b.logged("became leader")).toHaveLength(1);
    });

    it("hands over on SIGKILL with the default settings, the cluster never stale, and only the new leader publishes", async () => {
      const { prefix, a, b } = await leaderAndStandby("kill", "api");
      const lease = sampleLease(redis, prefix, "kill");

      await a.kill();
      await untilLeader(b, 1, 20_000);
      await newLeaderPublishes(prefix, "kill", "api");

      const samples = await lease.stop();
      const holders = holderRuns(samples)
        .map((run) => run.holder)
        .filter((holder) => holder !== null);
      expect(holders).toEqual(["kill-a", "kill-b"]);
      expect(staleMs(samples)).toBe(0);
      const leaseObject = await controlPlane.get(
        `/apis/coordination.k8s.io/v1/namespaces/${controlPlane.serviceAccount.namespace}/leases/edgeslice-sync-kill`,
      );
      expect(JSON.parse(leaseObject.body)).toMatchObject({
        spec: { holderIdentity: "kill-b", leaseTransitions: 1 },
      });
    });
  });
}

import { beforeAll, describe, expect, it } from "vitest";
import type { NodeRouter } from "../../functions/node/server.js";
import { exposedServiceObject } from "../fake-kube/fixtures.js";
import type { RecordingBackend } from "./support/backends.js";
import { snapshotLists } from "./support/contract-layout.js";
import type { KubeCluster } from "./support/kube-cluster.js";
import { NS, routerScenario } from "./support/router-scenario.js";

/** Whether the router's own store view lists `backend` as an active endpoint of the service (any version). */
function storeLists(on: NodeRouter, cluster: string, service: string, backend: RecordingBackend): boolean {
  return snapshotLists(on.redisSource?.current(), cluster, `${NS}/${service}`, backend);
}

/** The Node router end to end (support/router-scenario.ts) while a cluster's sync or a backend fails. */
describe("node router end to end", () => {
  const { fleet, started, startCluster, send, sendMany, untilReply, until, list, reached } = routerScenario();
  let east: KubeCluster;
  let router: NodeRouter;

  beforeAll(() => {
    ({ east, router } = started());
  });

  it("drops a cluster whose sync went quiet once its lease lapses, keeping the fresh one", async () => {
    const west = await startCluster({ name: "west", leaseMs: 1_000 });
    const onEast = await fleet.start("multi-east", "127.0.0.1");
    const onWest = await fleet.start("multi-west", "::1");
    east.kube.apply(exposedServiceObject(NS, "multi", "multi.e2e.test"));
    west.kube.apply(exposedServiceObject(NS, "multi", "multi.e2e.test"));
    list(east, "multi", onEast);
    list(west, "multi", onWest);
    await untilReply("multi.e2e.test", (reply) => reply.backend === "multi-west");
    await untilReply("multi.e2e.test", (reply) => reply.backend === "multi-east");

    await west.stop();
    const westView = () => router.redisSource?.current()?.clusters.find((c) => c.name === "west");
    await until(() => westView()?.stale === true, "west to go stale");
    const hitsWhenStale = onWest.hits();
    const replies = await sendMany("multi.e2e.test", 30);

    expect(replies.every((reply) => reply.status === 200 && reply.backend === "multi-east")).toBe(true);
    expect(onWest.hits()).toBe(hitsWhenStale);
    expect(westView()?.servicesV2.has(`${NS}/multi`)).toBe(true);
  });

  it("answers every idempotent request when a listed backend dies mid-run", async () => {
    const f1 = await fleet.start("flaky-1", "::1");
    const f2 = await fleet.start("flaky-2", "::1");
    east.kube.apply(exposedServiceObject(NS, "flaky", "flaky.e2e.test"));
    list(east, "flaky", f1);
    list(east, "flaky", f2);
    await untilReply("flaky.e2e.test", (reply) => reply.backend === "flaky-1");
    await untilReply("flaky.e2e.test", (reply) => reply.backend === "flaky-2");

    const statuses: number[] = [];
    let started = 0;
    const worker = async () => {
      while (started < 200) {
        started++;
        if (started === 60) void f1.kill();
        statuses.push((await send("flaky.e2e.test")).status);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));

    expect(statuses).toHaveLength(200);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(storeLists(router, "east", "flaky", f1)).toBe(true);
  });

  it("reached only backends the store listed", () => {
    const { all, unlisted } = reached();
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect(unlisted).toEqual([]);
  });
});

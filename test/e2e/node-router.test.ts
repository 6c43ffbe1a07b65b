import type { Pool } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import type { NodeRouter } from "../../functions/node/server.js";
import { exposedServiceObject } from "../fake-kube/fixtures.js";
import type { RecordingBackend } from "./support/backends.js";
import { snapshotLists } from "./support/contract-layout.js";
import type { KubeCluster } from "./support/kube-cluster.js";
import { NS, rawRequest, routerScenario } from "./support/router-scenario.js";

/** Whether the router's own store view lists `backend` as an active endpoint of the service (any version). */
function storeLists(on: NodeRouter, cluster: string, service: string, backend: RecordingBackend): boolean {
  return snapshotLists(on.redisSource?.current(), cluster, `${NS}/${service}`, backend);
}

/**
 * The Node router end to end (support/router-scenario.ts: fake API server → sync → Redis → router →
 * loopback backends): Services scaling, endpoints leaving, IP families, and no way to an unlisted backend.
 */
describe("node router end to end", () => {
  const { fleet, started, startRouter, send, sendMany, untilReply, until, list, unlist, reached } =
    routerScenario();
  let east: KubeCluster;
  let router: NodeRouter;
  let client: Pool;

  beforeAll(() => {
    ({ east, router, client } = started());
  });

  it("routes to a new Service and spreads over backends as it scales up", async () => {
    const w1 = await fleet.start("web-1", "127.0.0.1");
    const w2 = await fleet.start("web-2", "127.0.0.1");
    east.kube.apply(exposedServiceObject(NS, "web", "web.e2e.test"));
    list(east, "web", w1);

    await untilReply("web.e2e.test", (reply) => reply.status === 200);
    const before = await sendMany("web.e2e.test", 20);
    expect(new Set(before.map((reply) => reply.backend))).toEqual(new Set(["web-1"]));

    list(east, "web", w2);
    await untilReply("web.e2e.test", (reply) => reply.backend === "web-2");
    const after = await sendMany("web.e2e.test", 40);
    expect(after.every((reply) => reply.status === 200)).toBe(true);
    expect(new Set(after.map((reply) => reply.backend))).toEqual(new Set(["web-1", "web-2"]));
  });

  it("stops sending to a backend once the store no longer lists it (scale-down)", async () => {
    const [w1] = [await fleet.start("web-3", "127.0.0.1")];
    if (!w1) throw new Error("unreachable");
    list(east, "web", w1);
    await until(() => storeLists(router, "east", "web", w1), "web-3 to be listed");

    unlist(east, "web", w1);
    await until(() => !storeLists(router, "east", "web", w1), "web-3 to be unlisted");
    const hitsAtRemoval = w1.hits();
    const replies = await sendMany("web.e2e.test", 40);

    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(w1.hits()).toBe(hitsAtRemoval);
  });

  it("sends no new traffic to a terminating pod, and falls back to serving-terminating ones when none is ready", async () => {
    const a1 = await fleet.start("api-1", "127.0.0.1");
    const a2 = await fleet.start("api-2", "127.0.0.1");
    east.kube.apply(exposedServiceObject(NS, "api", "api.e2e.test"));
    list(east, "api", a1);
    list(east, "api", a2);
    await until(
      () => storeLists(router, "east", "api", a1) && storeLists(router, "east", "api", a2),
      "api ready",
    );
    // A sync writing store format v2 stores a new Service's record before its route.
    await untilReply("api.e2e.test", (reply) => reply.status === 200);

    list(east, "api", a1, { ready: false, serving: true, terminating: true });
    await until(() => !storeLists(router, "east", "api", a1), "api-1 to leave the active set");
    const hitsWhenTerminating = a1.hits();
    const replies = await sendMany("api.e2e.test", 30);
    expect(replies.every((reply) => reply.status === 200 && reply.backend === "api-2")).toBe(true);
    expect(a1.hits()).toBe(hitsWhenTerminating);

    list(east, "api", a2, { ready: false, serving: true, terminating: true });
    await until(() => storeLists(router, "east", "api", a1), "the fallback to serving-terminating endpoints");
    const fallback = await sendMany("api.e2e.test", 20);
    expect(fallback.every((reply) => reply.status === 200)).toBe(true);
  });

  it("serves a dual-stack Service by the router's family policy and fails over to the other family", async () => {
    const v4 = await fleet.start("dual-v4", "127.0.0.1");
    const v6 = await fleet.start("dual-v6", "::1");
    east.kube.apply(exposedServiceObject(NS, "dual", "dual.e2e.test"));
    list(east, "dual", v4);
    list(east, "dual", v6);
    const preferV6 = await startRouter({ IP_FAMILY: "PreferIPv6" });
    await until(
      () => storeLists(router, "east", "dual", v4) && storeLists(router, "east", "dual", v6),
      "both families listed",
    );
    await until(() => storeLists(preferV6.router, "east", "dual", v6), "the second router to load");
    // A sync writing store format v2 stores a new Service's record before its route.
    await untilReply("dual.e2e.test", (reply) => reply.status === 200);
    await untilReply("dual.e2e.test", (reply) => reply.status === 200, preferV6.client);

    const byV4Policy = await sendMany("dual.e2e.test", 20);
    const byV6Policy = await sendMany("dual.e2e.test", 20, preferV6.client);
    expect(new Set(byV4Policy.map((reply) => reply.backend))).toEqual(new Set(["dual-v4"]));
    expect(new Set(byV6Policy.map((reply) => reply.backend))).toEqual(new Set(["dual-v6"]));

    unlist(east, "dual", v4);
    await until(() => !storeLists(router, "east", "dual", v4), "the IPv4 backend to go");
    const failedOver = await sendMany("dual.e2e.test", 10);
    expect(new Set(failedOver.map((reply) => reply.backend))).toEqual(new Set(["dual-v6"]));
  });

  it("cannot be steered to an unlisted backend by Host, X-Forwarded-Host, absolute-form targets or dot segments", async () => {
    const decoy = await fleet.start("decoy", "127.0.0.1");

    const byHost = await send(decoy.address);
    const byForwarded = await client.request({
      method: "GET",
      path: "/",
      headers: { host: "nowhere.e2e.test", "x-forwarded-host": decoy.address },
    });
    await byForwarded.body.text();
    const byDots = await send("web.e2e.test", { path: `/../../${decoy.address}/` });
    const absolute = await rawRequest(
      router,
      `GET http://${decoy.address}/ HTTP/1.1\r\nHost: ${decoy.address}\r\nConnection: close\r\n\r\n`,
    );

    expect(byHost.status).toBe(404);
    expect(byForwarded.statusCode).toBe(404);
    expect(byDots.backend).not.toBe("decoy");
    expect(absolute).toMatch(/^HTTP\/1\.1 404/);
    expect(decoy.hits()).toBe(0);
  });

  it("never reached a backend the store did not list", () => {
    const { all, unlisted } = reached();
    expect(all.length).toBeGreaterThan(5);
    expect(unlisted).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteRecord } from "../../store/routes.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "../e2e/support/backends.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../e2e/support/contract-layout.js";
import {
  type BuiltRouter,
  get,
  type HostileWorld,
  startHostileWorld,
  until,
} from "./support/hostile-world.js";

/**
 * Issue 35 item 1 on the built router: `evil`, with only its own sync credential, publishes a route of its own
 * host through a listener of the same Gateway (`infra/edge`, port 80) as east's, whose hostname `*.test` is more
 * specific than east's listener without hostname. Pooled across clusters, that listener took every `*.test`
 * request away from east's routes (404). A cluster's listeners constrain only its own routes.
 */
const CLUSTER_GRANTS = "east=hosts:pay.test networks:127.0.0.1/32; evil=hosts:evil.test networks:::1/128";
let world: HostileWorld;
let router: BuiltRouter;
const fleet: BackendFleet = createBackendFleet();
let eastPod: RecordingBackend;
let evilPod: RecordingBackend;

const listenerOf = (hostnames: string[], listenerHostname?: string) => ({
  gateway: "infra/edge",
  port: 80,
  ...(listenerHostname === undefined ? {} : { listenerHostname }),
  hostnames,
});

const eastRoute: RouteRecord = {
  ...routeRecord("httproute:pay/web", {
    hostnames: ["pay.test"],
    rules: [routeRule([{ service: "pay/web", port: 80, weight: 1 }])],
  }),
  listeners: [listenerOf(["pay.test"])],
};
const evilRoute: RouteRecord = {
  ...routeRecord("httproute:evil/web", {
    hostnames: ["evil.test"],
    rules: [routeRule([{ service: "evil/web", port: 80, weight: 1 }])],
  }),
  listeners: [listenerOf(["evil.test"], "*.test")],
};

beforeAll(async () => {
  world = await startHostileWorld(["east", "evil"]);
  eastPod = await fleet.start("east", "127.0.0.1");
  evilPod = await fleet.start("evil", "::1");
  const east = await world.writer("east");
  const evil = await world.writer("evil");
  await east.heartbeat({ holder: "east-0", leaseMs: 600_000, at: Date.now() });
  await evil.heartbeat({ holder: "evil-0", leaseMs: 600_000, at: Date.now() });
  await east.putService(
    serviceRecordV2({
      cluster: "east",
      service: "pay/web",
      ports: [{ number: 80, ipv4: [endpoint(eastPod.ip, eastPod.port)] }],
    }),
  );
  await east.putRoute(eastRoute);
  await evil.putService(
    serviceRecordV2({
      cluster: "evil",
      service: "evil/web",
      ports: [{ number: 80, ipv6: [endpoint(evilPod.ip, evilPod.port)] }],
    }),
  );
  await evil.putRoute(evilRoute);
  router = await world.startRouter({ CLUSTER_GRANTS });
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await fleet.closeAll();
});

describe("Gateway listeners published by one cluster (built router, one ACL user per cluster)", () => {
  it("serve the hostile cluster's own host through its own listener", async () => {
    const answer = await until(
      () => get(router, "evil.test"),
      (item) => item.status === 200,
    );
    expect(answer.backend).toBe("evil");
  });

  it("never take another cluster's host away: pay.test stays east's whatever listener evil names", async () => {
    await until(
      () => get(router, "evil.test"),
      (item) => item.status === 200,
    );
    for (let i = 0; i < 10; i++) {
      const answer = await get(router, "pay.test");
      expect(answer.status).toBe(200);
      expect(answer.backend).toBe("east");
    }
  });
});

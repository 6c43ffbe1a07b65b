import { createRouting, type Routing } from "../../../../functions/core/routing.js";
import type { Selection } from "../../../../functions/core/selection/selection.js";
import { silentLogger } from "../../../../lib/logger.js";
import type { ClusterPlace } from "../../../../store/places.js";
import type { ServiceSteering } from "../../../../store/steering.js";
import type { ClusterHeartbeat, Snapshot } from "../../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../../e2e/support/contract-layout.js";
import { snapshotOf } from "../../fixtures.js";
import { testConfig } from "../../harness.js";

/** Three clusters and where they are: Frankfurt, Virginia, Oregon. */
export const PLACES: Record<string, ClusterPlace> = {
  fra: { region: "eu-central", location: { lat: 50.11, long: 8.68 } },
  iad: { region: "us-east", location: { lat: 38.95, long: -77.45 } },
  pdx: { region: "us-west", location: { lat: 45.84, long: -119.7 } },
};

export const ROUTE = routeRecord("httproute:shop/web", {
  hostnames: ["shop.test"],
  rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])],
});

/** shop/web in each cluster: two pods each (10.<n>.0.1 and .2), with the cluster's steering annotation. */
export function steeredSnapshot(
  steering: Record<string, ServiceSteering | undefined>,
  version = 1,
): Snapshot {
  return snapshotOf(
    Object.entries(steering).map(([name, annotation], n) => ({
      name,
      services: [
        {
          ...serviceRecordV2({
            cluster: name,
            service: "shop/web",
            ports: [{ number: 80, ipv4: [endpoint(`10.${n}.0.1`, 8080), endpoint(`10.${n}.0.2`, 8080)] }],
          }),
          ...(annotation ? { steering: annotation } : {}),
        },
      ],
      routes: [structuredClone(ROUTE)],
    })),
    version,
  );
}

export function heartbeatsOf(places: Record<string, ClusterPlace>): Map<string, ClusterHeartbeat> {
  return new Map(Object.entries(places).map(([name, place]) => [name, { holder: "sync", at: 0, ...place }]));
}

export interface SteeringRig {
  readonly routing: Routing;
  /** The clock every track reads, ms. */
  now: number;
}

/** Routing over `snapshot`, the clusters placed as PLACES says, on a clock the test moves. */
export function steeringRig(
  snapshot: Snapshot,
  config: Partial<Parameters<typeof createRouting>[0]["config"]> = {},
  random: () => number = () => 0.5,
): SteeringRig {
  const rig = { now: 1_000_000 } as SteeringRig;
  const heartbeats = heartbeatsOf(PLACES);
  (rig as { routing: Routing }).routing = createRouting({
    source: { current: () => snapshot, heartbeats: () => heartbeats },
    config: { ...testConfig, ...config },
    now: () => rig.now,
    random,
    balancing: "p2c",
    logger: silentLogger,
  });
  return rig;
}

/** The selection a GET to shop.test gets, with the client's place when given. */
export async function steered(
  routing: Routing,
  client?: Parameters<Routing["route"]>[1]["client"],
): Promise<Selection> {
  const result = await routing.route("http://shop.test/", { method: "GET", headers: new Headers(), client });
  if (typeof result === "string" || "redirect" in result || "preflight" in result)
    throw new Error(`not routed: ${JSON.stringify(result)}`);
  return result.selection;
}

/** The cluster of each tier, in order (one cluster can hold two tiers: its zone's and the rest). */
export function clusterOrder(selection: Selection): string[] {
  const order: string[] = [];
  for (const tier of selection.tiers) {
    const cluster = tier.backends[0]?.cluster ?? "";
    if (order.at(-1) !== cluster) order.push(cluster);
  }
  return order;
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  backend,
  gatewayObject,
  httpListener,
  httpRouteObject,
  INFRA,
  prefixMatch,
} from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteNonDisruptiveConfig: requests sent without pause while a route's backendRef changes,
 * and while a second route for the same path is added and the first deleted, all succeed; the traffic ends
 * at the new backend. The suite's pauses (1 s before, 2 s after) are shortened here.
 */
let world: Conformance;
const GATEWAY = "nondisruptive-httproute";
const route = (name: string, path: string, service: string) =>
  httpRouteObject(name, {
    parentRefs: [{ name: GATEWAY, namespace: INFRA }],
    rules: [{ matches: [prefixMatch(path)], backendRefs: [backend(service)] }],
  });

beforeAll(async () => {
  world = await startConformance({
    label: "nondisruptive",
    objects: [
      gatewayObject(GATEWAY, [httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } })]),
      route("nondisruptive-backend-change", "/backend-change", "infra-backend-v1"),
      route("nondisruptive-route-replace-a", "/route-replace", "infra-backend-v1"),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

/** Sends `path` back to back from 4 clients until stopped; counts the answers that were not 200. */
function continuousTraffic(path: string) {
  let running = true;
  const seen = { total: 0, failed: [] as string[] };
  const client = async () => {
    while (running) {
      const answer = await world.send({ host: GATEWAY_ADDRESS, path });
      seen.total += 1;
      if (answer.status !== 200) seen.failed.push(`${answer.status}`);
    }
  };
  const clients = Promise.all(Array.from({ length: 4 }, client));
  return async () => {
    running = false;
    await clients;
    return seen;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const backendOf = async (path: string, service: string) =>
  (
    await world.until(
      { host: GATEWAY_ADDRESS, path },
      (answer) => answer.echo?.backend === `${INFRA}/${service}`,
    )
  ).echo?.backend;

describe("conformance HTTPRouteNonDisruptiveConfig", () => {
  it("changes a route's backend without a failed request", async () => {
    expect(await backendOf("/backend-change", "infra-backend-v1")).toBe(`${INFRA}/infra-backend-v1`);
    const stop = continuousTraffic("/backend-change");
    await pause(300);
    world.cluster.kube.apply(route("nondisruptive-backend-change", "/backend-change", "infra-backend-v2"));
    expect(await backendOf("/backend-change", "infra-backend-v2")).toBe(`${INFRA}/infra-backend-v2`);
    await pause(500);
    const seen = await stop();
    expect(seen.total).toBeGreaterThan(0);
    expect(seen.failed).toEqual([]);
  });

  it("replaces a route by another for the same path without a failed request", async () => {
    expect(await backendOf("/route-replace", "infra-backend-v1")).toBe(`${INFRA}/infra-backend-v1`);
    const stop = continuousTraffic("/route-replace");
    await pause(300);
    world.cluster.kube.apply(route("nondisruptive-route-replace-b", "/route-replace", "infra-backend-v2"));
    const parents = await untilParents(world.cluster.kube, INFRA, "nondisruptive-route-replace-b", (found) =>
      found.some((entry) => entry.conditions.includes("Accepted=True/Accepted")),
    );
    expect(parents[0]?.conditions).toContain("Accepted=True/Accepted");
    world.cluster.kube.remove("HTTPRoute", INFRA, "nondisruptive-route-replace-a");
    expect(await backendOf("/route-replace", "infra-backend-v2")).toBe(`${INFRA}/infra-backend-v2`);
    await pause(500);
    const seen = await stop();
    expect(seen.total).toBeGreaterThan(0);
    expect(seen.failed).toEqual([]);
  });
});

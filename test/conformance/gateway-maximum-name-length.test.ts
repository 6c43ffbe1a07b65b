import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayMaximumNameLength: a Gateway whose name has the 253 characters a Kubernetes name may
 * have is reconciled (its conditions at its generation). Here a route to it is served too, since edgeslice
 * carries Gateway names into its records and the router's GATEWAYS setting.
 */
let world: Conformance;
const PREFIX = "gateway-maximum-name-length-";
const GATEWAY = PREFIX + "a".repeat(253 - PREFIX.length);

beforeAll(async () => {
  world = await startConformance({
    label: "max-name",
    routers: { router: `${INFRA}/${GATEWAY}` },
    objects: [
      gatewayObject(GATEWAY, [httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } })]),
      httpRouteObject("route-to-long-gateway", {
        parentRefs: [{ name: GATEWAY }],
        rules: [{ backendRefs: [backend("infra-backend-v1")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayMaximumNameLength", () => {
  it("reconciles a Gateway with a 253-character name", async () => {
    expect(GATEWAY).toHaveLength(253);
    const found = await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      hasLatestConditions,
    );
    expect(hasLatestConditions(found)).toBe(true);
  });

  it("serves a route attached to it through a router of that Gateway", async () => {
    const answer = await world.until(
      { host: "127.0.0.1:80", path: "/" },
      (found) => found.echo !== undefined,
    );
    expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
  });
});

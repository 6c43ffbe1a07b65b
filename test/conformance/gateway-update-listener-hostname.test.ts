import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, untilListeners, workingListener } from "./support/gateway-listeners.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";
import { untilParents } from "./support/route-parents.js";

/**
 * Conformance GatewayUpdateListenerHostname: a route whose hostname no listener matches is Accepted=False
 * NoMatchingListenerHostname; once the listener's hostname is changed to the route's, the route is Accepted,
 * attached to the listener, and the Gateway's conditions follow the new generation.
 */
let world: Conformance;
const GATEWAY = "gateway-update-listener-hostname";
const ROUTE = "httproute-update-listener-hostname";
const gateway = (hostname: string) =>
  gatewayObject(GATEWAY, [
    httpListener("http", 80, { hostname, allowedRoutes: { namespaces: { from: "Same" } } }),
  ]);

beforeAll(async () => {
  world = await startConformance({
    label: "update-hostname",
    objects: [
      gateway("rejected.example.com"),
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: GATEWAY }],
        hostnames: ["accepted.example.com"],
        rules: [{ backendRefs: [backend("infra-backend-v1")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

const routeAccepted = (reason: string) =>
  untilParents(world.cluster.kube, INFRA, ROUTE, (found) => found[0]?.conditions.includes(reason) === true);

describe("conformance GatewayUpdateListenerHostname", () => {
  it("accepts the route once the listener's hostname is changed to the route's", async () => {
    const rejected = await routeAccepted("Accepted=False/NoMatchingListenerHostname");
    expect(rejected[0]?.conditions).toContain("Accepted=False/NoMatchingListenerHostname");

    world.cluster.kube.apply(gateway("accepted.example.com"));
    const accepted = await routeAccepted("Accepted=True/Accepted");
    expect(accepted[0]?.conditions).toContain("Accepted=True/Accepted");

    const expected = [workingListener("http", 1)];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
    const conditions = await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      hasLatestConditions,
    );
    expect(hasLatestConditions(conditions)).toBe(true);
  });

  it("serves the route's hostname once accepted", async () => {
    const answer = await world.until(
      { host: "accepted.example.com", path: "/" },
      (found) => found.echo !== undefined,
    );
    expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
  });
});

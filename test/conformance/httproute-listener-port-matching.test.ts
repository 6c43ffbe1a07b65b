import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteListenerPortMatching: one Gateway with listeners on 80 (foo.com), 8080 (foo.com,
 * bar.com) and 8090 (foo.com, bar.com); a route per port by parentRef port (8090 also by sectionName). The
 * router serves that Gateway and reads the listener port from the Host the client sent.
 */
let world: Conformance;
const GATEWAY = "httproute-listener-port-matching";
const same = { allowedRoutes: { namespaces: { from: "Same" } } };
const parentRef = (port: number, sectionName?: string) => ({
  name: GATEWAY,
  namespace: INFRA,
  port,
  ...(sectionName ? { sectionName } : {}),
});

beforeAll(async () => {
  world = await startConformance({
    label: "port-match",
    routers: { router: `${INFRA}/${GATEWAY}` },
    objects: [
      gatewayObject(GATEWAY, [
        httpListener("listener-1", 80, { ...same, hostname: "foo.com" }),
        httpListener("listener-2", 8080, { ...same, hostname: "foo.com" }),
        httpListener("listener-3", 8080, { ...same, hostname: "bar.com" }),
        httpListener("listener-4", 8090, { ...same, hostname: "foo.com" }),
        httpListener("listener-5", 8090, { ...same, hostname: "bar.com" }),
      ]),
      httpRouteObject("backend-v1", {
        parentRefs: [parentRef(80)],
        rules: [{ backendRefs: [backend("infra-backend-v1")] }],
      }),
      httpRouteObject("backend-v2", {
        parentRefs: [parentRef(8080)],
        rules: [{ backendRefs: [backend("infra-backend-v2")] }],
      }),
      httpRouteObject("backend-v3", {
        parentRefs: [parentRef(8090, "listener-4")],
        rules: [{ backendRefs: [backend("infra-backend-v3")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteListenerPortMatching", () => {
  it.each([
    ["backend-v1", `${GATEWAY}/80`],
    ["backend-v2", `${GATEWAY}/8080`],
    ["backend-v3", `${GATEWAY}/listener-4/8090`],
  ])("accepts %s on its listener with resolved refs", async (name, parent) => {
    const parents = await untilParents(world.cluster.kube, INFRA, name, (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(parents.map((entry) => entry.parent)).toEqual([parent]);
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("counts the routes attached to each listener", async () => {
    await world.until({ host: "foo.com:8090", path: "/" }, (answer) => answer.echo !== undefined);
    const status = world.cluster.kube.get("Gateway", INFRA, GATEWAY)?.status as
      | { addresses?: unknown; listeners?: { name: string; attachedRoutes: number }[] }
      | undefined;
    expect(status?.addresses).toEqual([{ type: "IPAddress", value: "127.0.0.1" }]);
    expect(status?.listeners?.map((item) => `${item.name}=${item.attachedRoutes}`)).toEqual([
      "listener-1=1",
      "listener-2=1",
      "listener-3=1",
      "listener-4=1",
      "listener-5=0",
    ]);
  });

  it.each([
    ["foo.com", "infra-backend-v1"],
    ["foo.com:8080", "infra-backend-v2"],
    ["bar.com:8080", "infra-backend-v2"],
    ["foo.com:8090", "infra-backend-v3"],
  ])("routes Host %s to %s", async (host, service) => {
    const answer = await world.until({ host, path: "/" }, (found) => found.echo !== undefined);
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${INFRA}/${service}`);
  });

  it("answers 404 to bar.com on 8090, whose listener no route attached to", async () => {
    await world.until({ host: "foo.com:8090", path: "/" }, (answer) => answer.echo !== undefined);
    const answer = await world.send({ host: "bar.com:8090", path: "/" });
    expect(answer.status).toBe(404);
    expect(answer.echo).toBeUndefined();
  });
});

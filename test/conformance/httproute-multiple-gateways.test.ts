import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteMultipleGateways: one route shared by Gateways same-namespace and all-namespaces,
 * and one dedicated route per Gateway on "/". Each Gateway is served by its own router (GATEWAYS), reached
 * as the suite reaches a Gateway: at its address with the first listener's port in Host.
 */
let world: Conformance;
const SAME = `${INFRA}/same-namespace`;
const ALL = `${INFRA}/all-namespaces`;
const GATEWAY_ADDRESS = "127.0.0.1:80";

beforeAll(async () => {
  world = await startConformance({
    label: "multi-gw",
    routers: { same: SAME, all: ALL },
    objects: [
      httpRouteObject("multiple-gateways-shared-route", {
        parentRefs: [{ name: "same-namespace" }, { name: "all-namespaces" }],
        rules: [{ matches: [prefixMatch("/shared")], backendRefs: [backend("infra-backend-v1")] }],
      }),
      httpRouteObject("same-namespace-dedicated-route", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ matches: [prefixMatch("/")], backendRefs: [backend("infra-backend-v2")] }],
      }),
      httpRouteObject("all-namespaces-dedicated-route", {
        parentRefs: [{ name: "all-namespaces" }],
        rules: [{ matches: [prefixMatch("/")], backendRefs: [backend("infra-backend-v3")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteMultipleGateways", () => {
  it("accepts the shared route on both Gateways and each dedicated route on its own, with resolved refs", async () => {
    const shared = await untilParents(
      world.cluster.kube,
      INFRA,
      "multiple-gateways-shared-route",
      (parents) => acceptedAndResolved(parents, 2),
    );
    expect(shared.map((entry) => entry.parent)).toEqual(["same-namespace", "all-namespaces"]);
    expect(acceptedAndResolved(shared, 2)).toBe(true);
    for (const name of ["same-namespace-dedicated-route", "all-namespaces-dedicated-route"]) {
      const parents = await untilParents(world.cluster.kube, INFRA, name, (found) =>
        acceptedAndResolved(found, 1),
      );
      expect(acceptedAndResolved(parents, 1), name).toBe(true);
    }
  });

  it.each([
    ["same", "/shared", "infra-backend-v1"],
    ["same", "/", "infra-backend-v2"],
    ["all", "/shared", "infra-backend-v1"],
    ["all", "/", "infra-backend-v3"],
  ])("routes %s-namespace's %s to %s in the infra namespace", async (router, path, service) => {
    const answer = await world.until(
      { router, host: GATEWAY_ADDRESS, path },
      (found) => found.echo !== undefined,
    );
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${INFRA}/${service}`);
    expect(answer.echo?.path).toBe(path);
  });

  it("never answers one Gateway's request from the other Gateway's dedicated route", async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        world.send({
          router: index % 2 === 0 ? "same" : "all",
          host: GATEWAY_ADDRESS,
          path: `/other/${index}`,
        }),
      ),
    );
    expect(answers.map((answer) => answer.echo?.backend)).toEqual(
      Array.from({ length: 10 }, (_, index) => `${INFRA}/infra-backend-v${index % 2 === 0 ? 2 : 3}`),
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance HTTPRoutePreserveForeignStatus: a `status.parents` entry written by another controller survives
 * untouched while edgeslice rewrites its own entry for a new generation of the route (RouteStatus.parents:
 * an implementation manages only the entries of its controllerName).
 */
let world: Conformance;
const ROUTE = "preserve-foreign-status";
const route = (path: string) =>
  httpRouteObject(ROUTE, {
    parentRefs: [{ name: "same-namespace" }],
    rules: [{ matches: [prefixMatch(path)], backendRefs: [backend("infra-backend-v1")] }],
  });
type Parent = {
  controllerName: string;
  parentRef: { name: string };
  conditions: { observedGeneration?: number }[];
};
const OURS = "edgeslice.io/gateway-controller";

beforeAll(async () => {
  world = await startConformance({ label: "foreign-status", objects: [route("/preserve-foreign-status")] });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRoutePreserveForeignStatus", () => {
  it("keeps another controller's parent entry as it was while updating its own", async () => {
    const kube = world.cluster.kube;
    const parentsOf = () =>
      (kube.get("HTTPRoute", INFRA, ROUTE)?.status as { parents?: Parent[] } | undefined)?.parents ?? [];
    await untilConditions(() => readConditions(kube, "HTTPRoute", INFRA, ROUTE), hasLatestConditions);
    const current = kube.get("HTTPRoute", INFRA, ROUTE);
    if (!current) throw new Error(`no HTTPRoute ${ROUTE}`);
    const generation = Number(current.metadata.generation);
    const foreign = {
      parentRef: {
        group: "gateway.networking.k8s.io",
        kind: "Gateway",
        name: "unmanaged-gateway",
        namespace: INFRA,
      },
      controllerName: "example.net/stale-controller",
      conditions: [
        {
          type: "Accepted",
          status: "True",
          reason: "Accepted",
          message: "",
          observedGeneration: generation,
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    };
    // Written through the status as another controller would (the generation stays), then the spec changes.
    kube.apply({ ...current, status: { parents: [...parentsOf(), foreign] } } as never);
    kube.apply(route("/preserve-foreign-status-updated"));

    const oursCaughtUp = () => {
      const ours = parentsOf().find((entry) => entry.controllerName === OURS);
      const now = Number(kube.get("HTTPRoute", INFRA, ROUTE)?.metadata.generation);
      return (
        now > generation &&
        ours !== undefined &&
        ours.conditions.every((item) => item.observedGeneration === now)
      );
    };
    const deadline = Date.now() + 5_000;
    while (!oursCaughtUp() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(oursCaughtUp()).toBe(true);
    const parents = parentsOf();
    expect(parents.map((entry) => `${entry.controllerName} ${entry.parentRef.name}`).sort()).toEqual([
      `${OURS} same-namespace`,
      "example.net/stale-controller unmanaged-gateway",
    ]);
    expect(parents.find((entry) => entry.controllerName === foreign.controllerName)).toEqual(foreign);
  });
});

import { describe, expect, it } from "vitest";
import {
  httpRoute,
  parentConditions,
  referenceGrant,
  SERVICES,
  service,
  toService,
  translate,
} from "./fixtures.js";

const ROUTE_FROM_INFRA = { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "infra" };
const webBackend = service("web-backend", "web");
const backendsOf = (result: ReturnType<typeof translate>) =>
  result.routes[0]?.rules.map((rule) => rule.backends);

describe("cross-namespace backendRefs and ReferenceGrant", () => {
  const crossRoute = httpRoute("cross", { rules: [toService("web-backend", { namespace: "web" })] });
  const withGrant = (grant: ReturnType<typeof referenceGrant>[]) =>
    translate({ httpRoutes: [crossRoute], referenceGrants: grant, services: [...SERVICES, webBackend] });

  it.each([
    [
      "a grant naming the Service (conformance HTTPRouteReferenceGrant)",
      [referenceGrant("web", [ROUTE_FROM_INFRA], [{ group: "", kind: "Service", name: "web-backend" }])],
      true,
    ],
    [
      "a grant to every Service of the namespace",
      [referenceGrant("web", [ROUTE_FROM_INFRA], [{ group: "", kind: "Service" }])],
      true,
    ],
    ["no grant (conformance HTTPRouteInvalidCrossNamespaceBackendRef)", [], false],
    [
      "a grant naming another Service",
      [referenceGrant("web", [ROUTE_FROM_INFRA], [{ group: "", kind: "Service", name: "other" }])],
      false,
    ],
    [
      "a grant from another namespace",
      [
        referenceGrant(
          "web",
          [{ ...ROUTE_FROM_INFRA, namespace: "elsewhere" }],
          [{ group: "", kind: "Service" }],
        ),
      ],
      false,
    ],
    [
      "a grant from another kind",
      [referenceGrant("web", [{ ...ROUTE_FROM_INFRA, kind: "GRPCRoute" }], [{ group: "", kind: "Service" }])],
      false,
    ],
    [
      "a grant in the route's namespace instead of the target's",
      [referenceGrant("infra", [ROUTE_FROM_INFRA], [{ group: "", kind: "Service" }])],
      false,
    ],
  ])("with %s: resolved is %s", (_case, grants, resolved) => {
    const result = withGrant(grants);
    if (resolved) {
      expect(backendsOf(result)).toEqual([[{ service: "web/web-backend", port: 8080, weight: 1 }]]);
      expect(parentConditions(result, "infra/cross")).toEqual([
        "Accepted=True/Accepted",
        "ResolvedRefs=True/ResolvedRefs",
      ]);
    } else {
      expect(backendsOf(result)).toEqual([
        [{ invalid: expect.stringMatching(/^RefNotPermitted: /), weight: 1 }],
      ]);
      // The route is still accepted: its refused share is answered 500 by the router.
      expect(parentConditions(result, "infra/cross")).toEqual([
        "Accepted=True/Accepted",
        "ResolvedRefs=False/RefNotPermitted",
      ]);
    }
  });

  it("keeps the rules a grant allows and refuses the others (conformance HTTPRouteInvalidReferenceGrant)", () => {
    const grant = referenceGrant(
      "app",
      [ROUTE_FROM_INFRA],
      [{ group: "", kind: "Service", name: "app-backend-v1" }],
    );
    const route = httpRoute("invalid-reference-grant", {
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/v2" } }],
          ...toService("app-backend-v2", { namespace: "app" }),
        },
        toService("app-backend-v1", { namespace: "app" }),
      ],
    });
    const services = [...SERVICES, service("app-backend-v1", "app"), service("app-backend-v2", "app")];
    const result = translate({ httpRoutes: [route], referenceGrants: [grant], services });
    expect(backendsOf(result)).toEqual([
      [{ invalid: "RefNotPermitted: no ReferenceGrant in app allows Service app/app-backend-v2", weight: 1 }],
      [{ service: "app/app-backend-v1", port: 8080, weight: 1 }],
    ]);
    expect(parentConditions(result, "infra/invalid-reference-grant")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/RefNotPermitted",
    ]);
  });
});

describe("backendRef resolution", () => {
  const services = [...SERVICES, service("dns", "infra", [{ name: "dns", port: 53, protocol: "UDP" }])];
  it.each([
    [
      "a kind other than Service (conformance HTTPRouteInvalidBackendRefUnknownKind)",
      { name: "infra-backend-v1", kind: "UnknownKind", port: 8080 },
      "InvalidKind",
    ],
    [
      "a Service of another group",
      { name: "infra-backend-v1", group: "multicluster.x-k8s.io", kind: "ServiceImport", port: 8080 },
      "InvalidKind",
    ],
    ["a port the Service does not have", { name: "infra-backend-v1", port: 9999 }, "BackendNotFound"],
    ["no port", { name: "infra-backend-v1" }, "BackendNotFound"],
    ["a UDP port", { name: "dns", port: 53 }, "UnsupportedProtocol"],
  ])("marks %s invalid, keeping its weight", (_case, ref, reason) => {
    const result = translate({
      httpRoutes: [httpRoute("web", { rules: [{ backendRefs: [{ ...ref, weight: 3 }] }] })],
      services,
    });
    expect(backendsOf(result)).toEqual([
      [{ invalid: expect.stringMatching(new RegExp(`^${reason}: `)), weight: 3 }],
    ]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      `ResolvedRefs=False/${reason}`,
    ]);
  });

  it("publishes a Service this cluster does not have as a backend with the ref's port and reports BackendNotFound (conformance HTTPRouteInvalidNonExistentBackendRef)", () => {
    const result = translate({
      httpRoutes: [
        httpRoute("web", { rules: [{ backendRefs: [{ name: "nonexistent", port: 8080, weight: 3 }] }] }),
      ],
    });
    expect(backendsOf(result)).toEqual([[{ service: "infra/nonexistent", port: 8080, weight: 3 }]]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/BackendNotFound",
    ]);
    expect(result.statuses.httpRoutes.get("infra/web")?.[0]?.conditions[1]?.message).toBe(
      "Service infra/nonexistent not found",
    );
  });

  it("publishes the same record for a canary Service whether or not the cluster has it yet, so the clusters' copies merge", () => {
    const canaryRoute = httpRoute("shop", {
      rules: [
        {
          backendRefs: [
            { name: "infra-backend-v1", port: 8080, weight: 90 },
            { name: "canary", port: 8080, weight: 10 },
          ],
        },
      ],
    });
    const west = translate({ httpRoutes: [canaryRoute] });
    const east = translate({
      httpRoutes: [canaryRoute],
      services: [...SERVICES, service("canary", "infra")],
    });
    expect(west.routes).toEqual(east.routes);
    expect(parentConditions(west, "infra/shop")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/BackendNotFound",
    ]);
    expect(parentConditions(east, "infra/shop")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
  });

  it("keeps a missing Service in another namespace without a ReferenceGrant invalid (RefNotPermitted)", () => {
    const result = translate({
      httpRoutes: [httpRoute("web", { rules: [toService("nonexistent", { namespace: "web" })] })],
    });
    expect(backendsOf(result)).toEqual([
      [{ invalid: expect.stringMatching(/^RefNotPermitted: /), weight: 1 }],
    ]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/RefNotPermitted",
    ]);
  });

  it("keeps weights as given: 0 gets no traffic, invalid refs keep their share (conformance HTTPRouteWeight)", () => {
    const route = httpRoute("weights", {
      rules: [
        {
          backendRefs: [
            { name: "infra-backend-v1", port: 8080, weight: 70 },
            { name: "infra-backend-v2", port: 8080, weight: 30 },
            { name: "infra-backend-v3", port: 8080, weight: 0 },
            { name: "missing", port: 8080, weight: 10 },
          ],
        },
      ],
    });
    expect(backendsOf(translate({ httpRoutes: [route] }))).toEqual([
      [
        { service: "infra/infra-backend-v1", port: 8080, weight: 70 },
        { service: "infra/infra-backend-v2", port: 8080, weight: 30 },
        { service: "infra/infra-backend-v3", port: 8080, weight: 0 },
        { service: "infra/missing", port: 8080, weight: 10 },
      ],
    ]);
  });

  it("names the first unresolved ref in ResolvedRefs and counts the others", () => {
    const route = httpRoute("web", {
      rules: [
        { backendRefs: [{ name: "gone-a", port: 1 }] },
        { backendRefs: [{ name: "x", kind: "Pod", port: 1 }] },
      ],
    });
    const resolved = translate({ httpRoutes: [route] }).statuses.httpRoutes.get("infra/web")?.[0]
      ?.conditions[1];
    expect(resolved).toMatchObject({
      status: "False",
      reason: "BackendNotFound",
      message: "Service infra/gone-a not found (and 1 more)",
    });
  });
});

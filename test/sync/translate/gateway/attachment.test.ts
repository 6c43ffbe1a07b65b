import { describe, expect, it } from "vitest";
import {
  gateway,
  gatewayClass,
  httpRoute,
  listener,
  listenerSummary,
  namespace,
  parentConditions,
  toService,
  translate,
} from "./fixtures.js";

/** Manifests after conformance HTTPRouteHostnameIntersection (tests/httproute-hostname-intersection.yaml). */
describe("conformance HTTPRouteHostnameIntersection: routes attach where hostnames intersect", () => {
  const gw = gateway({
    listeners: [
      listener("listener-1", { hostname: "very.specific.com" }),
      listener("listener-2", { hostname: "*.wildcard.io" }),
      listener("listener-3", { hostname: "*.anotherwildcard.io" }),
    ],
  });
  const route = (name: string, hostnames: string[], path: string, backend: string) =>
    httpRoute(name, {
      hostnames,
      rules: [{ matches: [{ path: { type: "PathPrefix", value: path } }], ...toService(backend) }],
    });
  const result = translate({
    gateways: [gw],
    httpRoutes: [
      route(
        "specific-host-matches-listener-specific-host",
        ["non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"],
        "/s1",
        "infra-backend-v1",
      ),
      route(
        "specific-host-matches-listener-wildcard-host",
        ["non.matching.com", "wildcard.io", "foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"],
        "/s2",
        "infra-backend-v2",
      ),
      route(
        "wildcard-host-matches-listener-specific-host",
        ["non.matching.com", "*.specific.com"],
        "/s3",
        "infra-backend-v3",
      ),
      route(
        "wildcard-host-matches-listener-wildcard-host",
        ["*.anotherwildcard.io"],
        "/s4",
        "infra-backend-v1",
      ),
      route("no-intersecting-hosts", ["specific.but.wrong.com", "wildcard.io"], "/s5", "infra-backend-v2"),
    ],
  });

  it.each([
    ["specific-host-matches-listener-specific-host", ["very.specific.com"]],
    [
      "specific-host-matches-listener-wildcard-host",
      ["bar.wildcard.io", "foo.bar.wildcard.io", "foo.wildcard.io"],
    ],
    ["wildcard-host-matches-listener-specific-host", ["very.specific.com"]],
    ["wildcard-host-matches-listener-wildcard-host", ["*.anotherwildcard.io"]],
  ])("serves %s on the intersected hostnames only", (name, hostnames) => {
    const record = result.routes.find((item) => item.id === `httproute:infra/${name}`);
    expect(record?.hostnames).toEqual(hostnames);
    expect(record?.wildcard).toBe("suffix");
    expect(parentConditions(result, `infra/${name}`)).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
  });

  it("refuses the route that shares no hostname with any listener (NoMatchingListenerHostname)", () => {
    expect(result.routes.map((item) => item.id)).not.toContain("httproute:infra/no-intersecting-hosts");
    expect(parentConditions(result, "infra/no-intersecting-hosts")[0]).toBe(
      "Accepted=False/NoMatchingListenerHostname",
    );
  });

  it("counts in attachedRoutes only the routes accepted on each listener", () => {
    expect(listenerSummary(result).map((line) => line.split(" ").slice(0, 2).join(" "))).toEqual([
      "listener-1: 2",
      "listener-2: 1",
      "listener-3: 1",
    ]);
  });
});

describe("parentRefs and allowedRoutes", () => {
  const two = gateway({
    listeners: [listener("http"), listener("other", { port: 8080, hostname: "b.example.com" })],
  });
  const simple = (spec: Record<string, unknown>, options?: { namespace?: string }) =>
    httpRoute("web", { ...toService("infra-backend-v1"), ...spec }, options);

  it.each([
    [
      "a sectionName no listener has (conformance HTTPRouteInvalidParentRefNotMatchingSectionName)",
      { parentRefs: [{ name: "gw", sectionName: "nope" }] },
      "Accepted=False/NoMatchingParent",
    ],
    [
      "a port no listener has (conformance HTTPRouteInvalidParentRefNotMatchingListenerPort)",
      { parentRefs: [{ name: "gw", port: 9090 }] },
      "Accepted=False/NoMatchingParent",
    ],
    [
      "sectionName and port that select different listeners",
      { parentRefs: [{ name: "gw", sectionName: "http", port: 8080 }] },
      "Accepted=False/NoMatchingParent",
    ],
    [
      "a sectionName naming a listener",
      { parentRefs: [{ name: "gw", sectionName: "other" }] },
      "Accepted=True/Accepted",
    ],
    ["a port selecting a listener", { parentRefs: [{ name: "gw", port: 8080 }] }, "Accepted=True/Accepted"],
  ])("answers %s", (_case, spec, expected) => {
    expect(parentConditions(translate({ gateways: [two], httpRoutes: [simple(spec)] }), "infra/web")[0]).toBe(
      expected,
    );
  });

  it("serves only the hostnames of the listener the sectionName selects", () => {
    const result = translate({
      gateways: [two],
      httpRoutes: [simple({ parentRefs: [{ name: "gw", sectionName: "other" }] })],
    });
    expect(result.routes[0]?.hostnames).toEqual(["b.example.com"]);
    expect(listenerSummary(result).map((line) => line.split(" ").slice(0, 2).join(" "))).toEqual([
      "http: 0",
      "other: 1",
    ]);
  });

  it("refuses a route from another namespace under the default allowedRoutes (conformance HTTPRouteInvalidCrossNamespaceParentRef)", () => {
    const route = simple({ parentRefs: [{ name: "gw", namespace: "infra" }] }, { namespace: "web" });
    const result = translate({ httpRoutes: [route] });
    expect(parentConditions(result, "web/web")[0]).toBe("Accepted=False/NotAllowedByListeners");
    expect(result.routes).toEqual([]);
  });

  it.each([
    ["from All admits any namespace", { from: "All" }, "web", "Accepted=True/Accepted"],
    [
      "from Selector admits a namespace whose labels match",
      { from: "Selector", selector: { matchLabels: { team: "web" } } },
      "web",
      "Accepted=True/Accepted",
    ],
    [
      "from Selector with an expression admits a matching namespace",
      {
        from: "Selector",
        selector: { matchExpressions: [{ key: "team", operator: "In", values: ["web", "api"] }] },
      },
      "web",
      "Accepted=True/Accepted",
    ],
    [
      "from Selector refuses a namespace whose labels do not match",
      { from: "Selector", selector: { matchLabels: { team: "api" } } },
      "web",
      "Accepted=False/NotAllowedByListeners",
    ],
    [
      "from Selector refuses a namespace it has no labels for",
      { from: "Selector", selector: { matchLabels: { team: "web" } } },
      "unknown",
      "Accepted=False/NotAllowedByListeners",
    ],
    ["from Same refuses another namespace", { from: "Same" }, "web", "Accepted=False/NotAllowedByListeners"],
  ])("%s", (_case, namespaces, routeNamespace, expected) => {
    const gw = gateway({ listeners: [listener("http", { allowedRoutes: { namespaces } })] });
    const route = simple({ parentRefs: [{ name: "gw", namespace: "infra" }] }, { namespace: routeNamespace });
    const result = translate({
      gateways: [gw],
      httpRoutes: [route],
      namespaces: [namespace("web", { team: "web" })],
    });
    expect(parentConditions(result, `${routeNamespace}/web`)[0]).toBe(expected);
  });

  it("refuses a route on a listener whose kinds exclude HTTPRoute (conformance HTTPRouteDisallowedKind)", () => {
    const gw = gateway({
      listeners: [listener("http", { allowedRoutes: { kinds: [{ kind: "GRPCRoute" }] } })],
    });
    expect(parentConditions(translate({ gateways: [gw], httpRoutes: [simple({})] }), "infra/web")[0]).toBe(
      "Accepted=False/NotAllowedByListeners",
    );
  });

  it("refuses a route on a Gateway that is not accepted", () => {
    const gw = gateway({ spec: { addresses: [{ type: "example.com/named", value: "edge" }] } });
    expect(parentConditions(translate({ gateways: [gw], httpRoutes: [simple({})] }), "infra/web")[0]).toBe(
      "Accepted=False/NotAllowedByListeners",
    );
  });

  it("writes no status for parents that are not ours, and serves nothing through them", () => {
    const theirs = gateway({ name: "theirs", className: "other" });
    const route = simple({
      parentRefs: [{ name: "theirs" }, { name: "missing" }, { name: "web", kind: "Service", group: "" }],
    });
    const result = translate({
      gatewayClasses: [gatewayClass(), gatewayClass("other", "example.net/other")],
      gateways: [gateway(), theirs],
      httpRoutes: [route],
    });
    expect(result.statuses.httpRoutes.get("infra/web")).toEqual([]);
    expect(result.routes).toEqual([]);
    expect([...result.statuses.gateways.keys()]).toEqual(["infra/gw"]);
  });

  it("reports each of our parents separately and serves the union of their hostnames", () => {
    const a = gateway({ name: "a", listeners: [listener("http", { hostname: "a.example.com" })] });
    const b = gateway({ name: "b", listeners: [listener("http", { hostname: "b.example.com" })] });
    const c = gateway({ name: "c", listeners: [listener("http", { hostname: "c.example.com" })] });
    const route = simple({
      hostnames: ["a.example.com", "b.example.com"],
      parentRefs: [{ name: "b" }, { name: "c" }, { name: "a" }],
    });
    const result = translate({ gateways: [a, b, c], httpRoutes: [route] });
    const parents = result.statuses.httpRoutes.get("infra/web") ?? [];
    expect(parents.map((parent) => [parent.parentRef.name, parent.conditions[0]?.reason])).toEqual([
      ["b", "Accepted"],
      ["c", "NoMatchingListenerHostname"],
      ["a", "Accepted"],
    ]);
    expect(parents[0]?.parentRef).toEqual({ group: "gateway.networking.k8s.io", kind: "Gateway", name: "b" });
    expect(parents[0]?.controllerName).toBe("edgeslice.io/gateway-controller");
    expect(result.routes[0]?.hostnames).toEqual(["a.example.com", "b.example.com"]);
  });

  it("serves every host when a listener without hostname takes a route without hostnames", () => {
    const result = translate({ httpRoutes: [simple({})] });
    expect(result.routes[0]?.hostnames).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute } from "../../../../functions/core/routes/route-table.js";
import { chooseBackend } from "../../../../functions/core/routes/weights.js";
import type { RouteRecord } from "../../../../store/routes.js";
import {
  gateway,
  httpRoute,
  listener,
  referenceGrant,
  SERVICES,
  service,
  toService,
  translate,
} from "./fixtures.js";

/**
 * Translation and matcher together, over the manifests and request tables of Gateway API conformance tests
 * (gateway-api conformance/tests/*.yaml and *.go): what a request to the router would reach.
 */
function reach(routes: readonly RouteRecord[], host: string, path: string): string {
  const found = matchRoute(buildRouteTable(routes.map((route) => ({ route }))), host, {
    path,
    method: "GET",
    headers: new Headers(),
  });
  if (!found) return "404";
  const choice = chooseBackend(found.rule.backends, () => 0);
  if (choice.kind === "service") return choice.service.split("/")[1] ?? "?";
  return "500";
}

describe("conformance HTTPRouteListenerHostnameMatching", () => {
  const gw = gateway({
    listeners: [
      listener("listener-1", { hostname: "bar.com" }),
      listener("listener-2", { hostname: "foo.bar.com" }),
      listener("listener-3", { hostname: "*.bar.com" }),
      listener("listener-4", { hostname: "*.foo.com" }),
    ],
  });
  const on = (name: string, sections: string[], backend: string) =>
    httpRoute(name, {
      parentRefs: sections.map((sectionName) => ({ name: "gw", sectionName })),
      rules: [toService(backend)],
    });
  const { routes } = translate({
    gateways: [gw],
    httpRoutes: [
      on("backend-v1", ["listener-1"], "infra-backend-v1"),
      on("backend-v2", ["listener-2"], "infra-backend-v2"),
      on("backend-v3", ["listener-3", "listener-4"], "infra-backend-v3"),
    ],
  });
  it.each([
    ["bar.com", "infra-backend-v1"],
    ["foo.bar.com", "infra-backend-v2"],
    ["baz.bar.com", "infra-backend-v3"],
    ["boo.bar.com", "infra-backend-v3"],
    ["multiple.prefixes.bar.com", "infra-backend-v3"],
    ["multiple.prefixes.foo.com", "infra-backend-v3"],
    ["foo.com", "404"],
    ["no.matching.host", "404"],
  ])("sends %s to %s", (host, expected) => {
    expect(reach(routes, host, "/")).toBe(expected);
  });
});

describe("conformance HTTPRouteHostnameIntersection", () => {
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
  const { routes } = translate({
    gateways: [gw],
    httpRoutes: [
      route(
        "s1",
        ["non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"],
        "/s1",
        "infra-backend-v1",
      ),
      route(
        "s2",
        ["non.matching.com", "wildcard.io", "foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"],
        "/s2",
        "infra-backend-v2",
      ),
      route("s3", ["non.matching.com", "*.specific.com"], "/s3", "infra-backend-v3"),
      route("s4", ["*.anotherwildcard.io"], "/s4", "infra-backend-v1"),
      route("s5", ["specific.but.wrong.com", "wildcard.io"], "/s5", "infra-backend-v2"),
    ],
  });
  it.each([
    ["very.specific.com", "/s1", "infra-backend-v1"],
    ["non.matching.com", "/s1", "404"],
    ["foo.nonmatchingwildcard.io", "/s1", "404"],
    ["foo.wildcard.io", "/s1", "404"],
    ["very.specific.com", "/non-matching-prefix", "404"],
    ["foo.wildcard.io", "/s2", "infra-backend-v2"],
    ["bar.wildcard.io", "/s2", "infra-backend-v2"],
    ["foo.bar.wildcard.io", "/s2", "infra-backend-v2"],
    ["non.matching.com", "/s2", "404"],
    ["wildcard.io", "/s2", "404"],
    ["very.specific.com", "/s2", "404"],
    ["very.specific.com", "/s3", "infra-backend-v3"],
    ["foo.specific.com", "/s3", "404"],
    ["foo.wildcard.io", "/s3", "404"],
    ["foo.anotherwildcard.io", "/s4", "infra-backend-v1"],
    ["bar.anotherwildcard.io", "/s4", "infra-backend-v1"],
    ["foo.bar.anotherwildcard.io", "/s4", "infra-backend-v1"],
    ["anotherwildcard.io", "/s4", "404"],
    ["foo.wildcard.io", "/s4", "404"],
    ["specific.but.wrong.com", "/s5", "404"],
    ["wildcard.io", "/s5", "404"],
  ])("sends %s%s to %s", (host, path, expected) => {
    expect(reach(routes, host, path)).toBe(expected);
  });
});

describe("invalid backends answer 500 for their share", () => {
  it("conformance HTTPRouteInvalidReferenceGrant: the refused rule answers 500, the granted one serves", () => {
    const grant = referenceGrant(
      "app",
      [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "infra" }],
      [{ group: "", kind: "Service", name: "app-backend-v1" }],
    );
    const { routes } = translate({
      httpRoutes: [
        httpRoute("invalid-reference-grant", {
          rules: [
            {
              matches: [{ path: { type: "PathPrefix", value: "/v2" } }],
              ...toService("app-backend-v2", { namespace: "app" }),
            },
            toService("app-backend-v1", { namespace: "app" }),
          ],
        }),
      ],
      referenceGrants: [grant],
      services: [...SERVICES, service("app-backend-v1", "app"), service("app-backend-v2", "app")],
    });
    expect(reach(routes, "any.host", "/v2")).toBe("500");
    expect(reach(routes, "any.host", "/")).toBe("app-backend-v1");
  });

  it("conformance HTTPRouteAllBackendsWeightZero: every weight 0 answers 500", () => {
    const { routes } = translate({
      httpRoutes: [
        httpRoute("all-backends-weight-zero", { rules: [toService("infra-backend-v1", { weight: 0 })] }),
      ],
    });
    expect(reach(routes, "h", "/")).toBe("500");
  });
});

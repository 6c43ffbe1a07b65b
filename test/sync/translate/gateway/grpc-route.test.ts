import { describe, expect, it } from "vitest";
import type { Result } from "../../../../lib/result.js";
import {
  type GRPCRoute,
  grpcMatchAsHttp,
  parseGRPCRoute,
} from "../../../../sync/translate/gateway/grpc-route.js";
import {
  gateway,
  httpRoute,
  listener,
  listenerSummary,
  referenceGrant,
  SERVICES,
  service,
  translate,
} from "./fixtures.js";

/** GRPCRoute (gateway.networking.k8s.io/v1) into route records, through the fixtures' Gateway infra/gw. */
function grpcRoute(name: string, spec: Record<string, unknown>, namespace = "infra"): GRPCRoute {
  const result: Result<GRPCRoute> = parseGRPCRoute({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GRPCRoute",
    metadata: { name, namespace, generation: 4, creationTimestamp: "2024-01-01T00:00:00Z" },
    spec: { parentRefs: [{ name: "gw" }], ...spec },
  });
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

const toV1 = { backendRefs: [{ name: "infra-backend-v1", port: 8080 }] };
const SVC = "gateway_api_conformance.grpc_echo.grpcecho.GrpcEcho";

function grpcConditions(result: ReturnType<typeof translate>, key: string): string[] {
  const parents = result.statuses.grpcRoutes?.get(key) ?? [];
  return (parents[0]?.conditions ?? []).map((item) => `${item.type}=${item.status}/${item.reason}`);
}

describe("a GRPCRoute method match as a path match", () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    [
      "service and method: the Exact path /service/method",
      { method: { service: SVC, method: "Echo" } },
      { path: { type: "Exact", value: `/${SVC}/Echo` }, headers: [] },
    ],
    [
      "service alone: every method of it, the prefix /service",
      { method: { type: "Exact", service: "pkg.Svc" } },
      { path: { type: "PathPrefix", value: "/pkg.Svc" }, headers: [] },
    ],
    ["no method: every call", {}, { path: { type: "PathPrefix", value: "/" }, headers: [] }],
    [
      "header matches pass as HTTP's",
      { headers: [{ name: "version", value: "two" }] },
      { path: { type: "PathPrefix", value: "/" }, headers: [{ name: "version", value: "two" }] },
    ],
  ])("%s", (_case, match, expected) => {
    expect(grpcMatchAsHttp(match)).toEqual({ ok: true, match: expected });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ["a method without a service", { method: { method: "Echo" } }, /without a service/],
    [
      "RegularExpression (no bounded engine)",
      { method: { type: "RegularExpression", service: "a.*" } },
      /type RegularExpression/,
    ],
    [
      "a service name that cannot be one",
      { method: { service: "a/b", method: "Echo" } },
      /not a gRPC service name/,
    ],
    [
      "a method name that cannot be one",
      { method: { service: "a.B", method: "E cho" } },
      /not a gRPC method name/,
    ],
  ])("refuses %s", (_case, match, message) => {
    const result = grpcMatchAsHttp(match);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(message);
  });
});

describe("GRPCRoute translation", () => {
  it("publishes a grpcroute record whose rules route each method to its backend (conformance GRPCExactMethodMatching)", () => {
    const result = translate({
      grpcRoutes: [
        grpcRoute("exact-matching", {
          rules: [
            { matches: [{ method: { service: SVC, method: "Echo" } }], ...toV1 },
            {
              matches: [{ method: { service: SVC, method: "EchoTwo" } }],
              backendRefs: [{ name: "infra-backend-v2", port: 8080 }],
            },
          ],
        }),
      ],
    });
    const record = result.routes[0];
    expect([record?.id, record?.source]).toEqual(["grpcroute:infra/exact-matching", "grpcroute"]);
    expect(record?.rules.map((rule) => [rule.matches[0]?.path, rule.backends])).toEqual([
      [
        { type: "Exact", value: `/${SVC}/Echo` },
        [{ service: "infra/infra-backend-v1", port: 8080, weight: 1 }],
      ],
      [
        { type: "Exact", value: `/${SVC}/EchoTwo` },
        [{ service: "infra/infra-backend-v2", port: 8080, weight: 1 }],
      ],
    ]);
    expect(grpcConditions(result, "infra/exact-matching")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
  });

  it("drops a rule it cannot serve faithfully and says PartiallyInvalid", () => {
    const result = translate({
      grpcRoutes: [
        grpcRoute("mixed", {
          rules: [
            { matches: [{ method: { type: "RegularExpression", service: "pkg\\..*" } }], ...toV1 },
            toV1,
          ],
        }),
      ],
    });
    expect(result.routes[0]?.rules).toHaveLength(1);
    expect(grpcConditions(result, "infra/mixed")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
      "PartiallyInvalid=True/UnsupportedValue",
    ]);
  });

  it("is not accepted when no rule can be served", () => {
    const result = translate({
      grpcRoutes: [
        grpcRoute("method-only", { rules: [{ matches: [{ method: { method: "Echo" } }], ...toV1 }] }),
      ],
    });
    expect(result.routes).toEqual([]);
    expect(grpcConditions(result, "infra/method-only")[0]).toBe("Accepted=False/UnsupportedValue");
  });

  it("applies header modifiers and weights, and refuses a filter GRPCRoute does not define", () => {
    const result = translate({
      grpcRoutes: [
        grpcRoute("filters", {
          rules: [
            {
              filters: [
                {
                  type: "RequestHeaderModifier",
                  requestHeaderModifier: { set: [{ name: "x-a", value: "1" }] },
                },
              ],
              backendRefs: [
                { name: "infra-backend-v1", port: 8080, weight: 3 },
                { name: "infra-backend-v2", port: 8080, weight: 1 },
              ],
            },
            { filters: [{ type: "URLRewrite", urlRewrite: { hostname: "x.example" } }], ...toV1 },
          ],
        }),
      ],
    });
    const rule = result.routes[0]?.rules[0];
    expect(rule?.filters.requestHeaders?.set).toEqual([{ name: "x-a", value: "1" }]);
    expect(rule?.backends.map((backend) => backend.weight)).toEqual([3, 1]);
    expect(result.routes[0]?.rules).toHaveLength(1);
  });

  it("accepts a RequestMirror but says it is not applied: a gRPC call is never copied", () => {
    const mirror = {
      type: "RequestMirror",
      requestMirror: { backendRef: { name: "infra-backend-v2", port: 8080 } },
    };
    const result = translate({
      grpcRoutes: [grpcRoute("mirrored", { rules: [{ filters: [mirror], ...toV1 }] })],
    });
    expect(grpcConditions(result, "infra/mirrored")[0]).toBe("Accepted=True/Accepted");
    expect(result.problems).toEqual([
      { object: "GRPCRoute infra/mirrored", reason: "rule 0: RequestMirror filters are not applied" },
    ]);
  });

  it("needs a ReferenceGrant from GRPCRoute for a Service of another namespace", () => {
    const other = service("echo", "apps");
    const route = grpcRoute("cross", {
      rules: [{ backendRefs: [{ name: "echo", namespace: "apps", port: 8080 }] }],
    });
    const refused = translate({ grpcRoutes: [route], services: [...SERVICES, other] });
    expect(grpcConditions(refused, "infra/cross")[1]).toBe("ResolvedRefs=False/RefNotPermitted");
    const fromHttpRoute = [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "infra" }];
    const fromGrpcRoute = [{ group: "gateway.networking.k8s.io", kind: "GRPCRoute", namespace: "infra" }];
    const wrongKind = translate({
      grpcRoutes: [route],
      services: [...SERVICES, other],
      referenceGrants: [referenceGrant("apps", fromHttpRoute, [{ group: "", kind: "Service" }])],
    });
    expect(grpcConditions(wrongKind, "infra/cross")[1]).toBe("ResolvedRefs=False/RefNotPermitted");
    const granted = translate({
      grpcRoutes: [route],
      services: [...SERVICES, other],
      referenceGrants: [referenceGrant("apps", fromGrpcRoute, [{ group: "", kind: "Service" }])],
    });
    expect(grpcConditions(granted, "infra/cross")[1]).toBe("ResolvedRefs=True/ResolvedRefs");
  });

  it("attaches only to listeners whose allowedRoutes.kinds list GRPCRoute, and counts it in attachedRoutes", () => {
    const gw = gateway({
      listeners: [
        listener("http-only", { port: 80, allowedRoutes: { kinds: [{ kind: "HTTPRoute" }] } }),
        listener("any", { port: 8080 }),
      ],
    });
    const only = grpcRoute("only", { parentRefs: [{ name: "gw", sectionName: "http-only" }], rules: [toV1] });
    const any = grpcRoute("any", { parentRefs: [{ name: "gw", sectionName: "any" }], rules: [toV1] });
    const web = httpRoute("any", { parentRefs: [{ name: "gw", sectionName: "any" }], rules: [toV1] });
    const result = translate({ gateways: [gw], grpcRoutes: [only, any], httpRoutes: [web] });
    expect(grpcConditions(result, "infra/only")[0]).toBe("Accepted=False/NotAllowedByListeners");
    expect(grpcConditions(result, "infra/any")[0]).toBe("Accepted=True/Accepted");
    // An HTTPRoute and a GRPCRoute of one name are two routes.
    expect(listenerSummary(result).find((line) => line.startsWith("any:"))).toMatch(/^any: 2 /);
    expect(result.routes.map((route) => route.id)).toEqual(["grpcroute:infra/any", "httproute:infra/any"]);
  });
});

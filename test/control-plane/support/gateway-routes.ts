import { backendRef, httpRouteObject, parentRef } from "./route-objects.js";

export type StatusCondition = { type: string; status: string; reason: string; observedGeneration?: number };
/** What the tests read back of a Gateway API object: its resourceVersion, generation and status. */
export type GatewayApiObject = {
  metadata: { resourceVersion: string; generation?: number };
  status?: {
    addresses?: { type: string; value: string }[];
    conditions?: StatusCondition[];
    listeners?: { name: string; attachedRoutes: number }[];
    parents?: { controllerName: string; parentRef: { name: string }; conditions: StatusCondition[] }[];
  };
};

/**
 * The HTTPRoutes of test/control-plane/cases/gateway-api.case.ts, all in namespace shop, attached to Gateway infra/gw
 * (listeners `web` *.shop.test and `api` api.shop.test) but `theirs` (another controller's Gateway):
 * - canary: 90/10 over web-v1/web-v2; Exact + method and PathPrefix + header matches with request and
 *   response header modifiers; a RequestRedirect rule; a URLRewrite ReplacePrefixMatch rule;
 * - cross: a backendRef to other/api (needs a ReferenceGrant in other);
 * - missing: a backendRef to a Service that does not exist;
 * - wrong-kind: a backendRef to a ConfigMap;
 * - late: canary's host and match again (canary wins: as old, and first by name);
 * - elsewhere: a hostname no listener of gw allows.
 */
export function shopRoutes(): object[] {
  const toGw = [parentRef("infra", "gw")];
  return [
    httpRouteObject("shop", "canary", {
      parentRefs: toGw,
      hostnames: ["www.shop.test"],
      rules: [
        { backendRefs: [backendRef("web-v1", 90), backendRef("web-v2", 10)] },
        {
          matches: [
            { path: { type: "Exact", value: "/health" }, method: "GET" },
            {
              path: { type: "PathPrefix", value: "/beta" },
              headers: [{ name: "X-Canary", value: "yes" }],
            },
          ],
          filters: [
            {
              type: "RequestHeaderModifier",
              requestHeaderModifier: { set: [{ name: "x-env", value: "beta" }] },
            },
            { type: "ResponseHeaderModifier", responseHeaderModifier: { remove: ["server"] } },
          ],
          backendRefs: [backendRef("web-v2")],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/old" } }],
          filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 301 } }],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/api/v1" } }],
          filters: [
            {
              type: "URLRewrite",
              urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v1" } },
            },
          ],
          backendRefs: [backendRef("web-v1")],
        },
      ],
    }),
    httpRouteObject("shop", "cross", {
      parentRefs: toGw,
      hostnames: ["cross.shop.test"],
      rules: [{ backendRefs: [backendRef("api", 1, "other")] }],
    }),
    httpRouteObject("shop", "missing", {
      parentRefs: toGw,
      hostnames: ["missing.shop.test"],
      rules: [{ backendRefs: [backendRef("nope")] }],
    }),
    httpRouteObject("shop", "wrong-kind", {
      parentRefs: toGw,
      hostnames: ["kind.shop.test"],
      rules: [{ backendRefs: [{ group: "", kind: "ConfigMap", name: "settings" }] }],
    }),
    httpRouteObject("shop", "late", {
      parentRefs: toGw,
      hostnames: ["www.shop.test"],
      rules: [{ backendRefs: [backendRef("web-v2")] }],
    }),
    httpRouteObject("shop", "elsewhere", {
      parentRefs: toGw,
      hostnames: ["www.elsewhere.test"],
      rules: [{ backendRefs: [backendRef("web-v1")] }],
    }),
    httpRouteObject("shop", "theirs", {
      parentRefs: [parentRef("infra", "foreign-gw")],
      hostnames: ["theirs.test"],
      rules: [{ backendRefs: [backendRef("web-v1")] }],
    }),
  ];
}

/** The canary HTTPRoute of shopRoutes() with the weights of its first rule changed: a spec change. */
export function canaryWeighted(stable: number, canary: number): object {
  const route = shopRoutes().find(
    (object) => (object as { metadata: { name: string } }).metadata.name === "canary",
  ) as { spec: { rules: object[] } };
  const rules = route.spec.rules.map((rule, index) =>
    index === 0
      ? { ...rule, backendRefs: [backendRef("web-v1", stable), backendRef("web-v2", canary)] }
      : rule,
  );
  return { ...route, spec: { ...route.spec, rules } };
}

import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRoutePathMatchOrder: among one route's rules, an Exact match wins over any prefix, and the
 * longest matching PathPrefix wins over shorter ones, whatever the order the rules are written in.
 */
const exact = (value: string, service: string) => ({
  matches: [{ path: { type: "Exact", value } }],
  backendRefs: [backend(service)],
});
const prefix = (value: string, service: string) => ({
  matches: [prefixMatch(value)],
  backendRefs: [backend(service)],
});

describeRoutingConformance("HTTPRoutePathMatchOrder", {
  objects: [
    httpRouteObject("path-matching-order", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        prefix("/match/", "infra-backend-v3"),
        exact("/match", "infra-backend-v1"),
        prefix("/match/prefix/one", "infra-backend-v2"),
        exact("/match/exact", "infra-backend-v2"),
        prefix("/match/prefix/", "infra-backend-v1"),
        exact("/match/exact/one", "infra-backend-v3"),
      ],
    }),
  ],
  routes: [{ name: "path-matching-order" }],
  cases: [
    { path: "/match/exact/one", backend: "infra-backend-v3" },
    { path: "/match/exact", backend: "infra-backend-v2" },
    { path: "/match", backend: "infra-backend-v1" },
    { path: "/match/prefix/one/any", backend: "infra-backend-v2" },
    { path: "/match/prefix/any", backend: "infra-backend-v1" },
    { path: "/match/any", backend: "infra-backend-v3" },
  ],
});

import { backend, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/** Conformance HTTPRouteExactPathMatching: Exact matches the whole path, case and trailing slash included. */
const exact = (value: string, service: string) => ({
  matches: [{ path: { type: "Exact", value } }],
  backendRefs: [backend(service)],
});

describeRoutingConformance("HTTPRouteExactPathMatching", {
  objects: [
    httpRouteObject("exact-matching", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [exact("/one", "infra-backend-v1"), exact("/two", "infra-backend-v2")],
    }),
  ],
  routes: [{ name: "exact-matching" }],
  cases: [
    { path: "/one", backend: "infra-backend-v1" },
    { path: "/two", backend: "infra-backend-v2" },
    { path: "/", status: 404 },
    { path: "/one/example", status: 404 },
    { path: "/two/", status: 404 },
    { path: "/Two", status: 404 },
  ],
});

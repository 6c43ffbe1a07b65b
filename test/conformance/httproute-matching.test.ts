import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteMatching: two rules, each matched by a path prefix or by a `version` header (two
 * HTTPRouteMatches of one rule are ORed); prefixes match whole path segments, so `/v2example` is not `/v2`.
 */
const rule = (path: string, version: string, service: string) => ({
  matches: [prefixMatch(path), { headers: [{ name: "version", value: version }] }],
  backendRefs: [backend(service)],
});
const v1 = "infra-backend-v1";
const v2 = "infra-backend-v2";

describeRoutingConformance("HTTPRouteMatching", {
  objects: [
    httpRouteObject("matching", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [rule("/", "one", v1), rule("/v2", "two", v2)],
    }),
  ],
  routes: [{ name: "matching" }],
  cases: [
    { path: "/", backend: v1 },
    { path: "/example", backend: v1 },
    { path: "/", headers: { version: "one" }, backend: v1 },
    { path: "/v2", backend: v2 },
    { path: "/v2/", backend: v2 },
    { path: "/v2/example", backend: v2 },
    { path: "/", headers: { version: "two" }, backend: v2 },
    { path: "/v2example", backend: v1 },
    { path: "/foo/v2/example", backend: v1 },
  ],
});

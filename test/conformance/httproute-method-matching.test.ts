import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteMethodMatching: method matches alone, with path and header matches (ANDed within a
 * match, ORed across), and their precedence (after the path, before headers).
 */
const header = (value: string) => ({ headers: [{ name: "version", value }] });
const rule = (service: string, ...matches: Record<string, unknown>[]) => ({
  matches,
  backendRefs: [backend(service)],
});

describeRoutingConformance("HTTPRouteMethodMatching", {
  objects: [
    httpRouteObject("method-matching", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        rule("infra-backend-v1", { method: "POST" }),
        rule("infra-backend-v2", { method: "GET" }),
        rule("infra-backend-v1", { ...prefixMatch("/path1"), method: "GET" }),
        rule("infra-backend-v2", { ...header("one"), method: "PUT" }),
        rule("infra-backend-v3", { ...prefixMatch("/path2"), ...header("two"), method: "POST" }),
        rule(
          "infra-backend-v1",
          { ...prefixMatch("/path3"), method: "PATCH" },
          { ...prefixMatch("/path4"), ...header("three"), method: "DELETE" },
        ),
        rule("infra-backend-v1", prefixMatch("/path5")),
        rule("infra-backend-v2", { method: "PATCH" }),
        rule("infra-backend-v3", header("four")),
      ],
    }),
  ],
  routes: [{ name: "method-matching" }],
  cases: [
    { method: "POST", path: "/", backend: "infra-backend-v1" },
    { method: "GET", path: "/", backend: "infra-backend-v2" },
    { method: "HEAD", path: "/", status: 404 },
    { method: "GET", path: "/path1", backend: "infra-backend-v1" },
    { method: "PUT", path: "/", headers: { version: "one" }, backend: "infra-backend-v2" },
    { method: "POST", path: "/path2", headers: { version: "two" }, backend: "infra-backend-v3" },
    { method: "PATCH", path: "/path3", backend: "infra-backend-v1" },
    { method: "DELETE", path: "/path4", headers: { version: "three" }, backend: "infra-backend-v1" },
    { method: "PUT", path: "/", status: 404 },
    { method: "DELETE", path: "/path4", status: 404 },
    { method: "PATCH", path: "/path5", backend: "infra-backend-v1" },
    { method: "PATCH", path: "/", headers: { version: "four" }, backend: "infra-backend-v2" },
  ],
});

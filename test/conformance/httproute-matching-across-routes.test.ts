import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteMatchingAcrossRoutes: the rules of two routes are ranked together for the hosts both
 * serve. `/v2` and the `version: two` header go to v2 only on the `*.com` route's hosts; example.net, served
 * by the first route only, sends `/v2` to v1.
 */
const rule = (path: string, version: string, service: string) => ({
  matches: [prefixMatch(path), { headers: [{ name: "version", value: version }] }],
  backendRefs: [backend(service)],
});
const route = (name: string, hostnames: string[], path: string, version: string, service: string) =>
  httpRouteObject(name, {
    parentRefs: [{ name: "same-namespace" }],
    hostnames,
    rules: [rule(path, version, service)],
  });
const v1 = "infra-backend-v1";
const v2 = "infra-backend-v2";

describeRoutingConformance("HTTPRouteMatchingAcrossRoutes", {
  objects: [
    route("matching-part1", ["example.com", "example.net"], "/", "one", v1),
    route("matching-part2", ["*.com"], "/v2", "two", v2),
  ],
  routes: [{ name: "matching-part1" }, { name: "matching-part2" }],
  cases: [
    { host: "example.com", path: "/", backend: v1 },
    { host: "example.com", path: "/example", backend: v1 },
    { host: "example.net", path: "/example", backend: v1 },
    { host: "example.com", path: "/example", headers: { version: "one" }, backend: v1 },
    { host: "example.com", path: "/v2", backend: v2 },
    { host: "example.net", path: "/v2", backend: v1 },
    { host: "example.com", path: "/v2/example", backend: v2 },
    { host: "example.com", path: "/", headers: { version: "two" }, backend: v2 },
  ],
});

import { backend, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteHeaderMatching: Exact header matches, names case-insensitive, ANDed within a match
 * and ORed across matches; more header matches win, then the first rule.
 */
const headers = (...pairs: [string, string][]) => ({
  headers: pairs.map(([name, value]) => ({ name, value })),
});
const rule = (service: string, ...matches: Record<string, unknown>[]) => ({
  matches,
  backendRefs: [backend(service)],
});

describeRoutingConformance("HTTPRouteHeaderMatching", {
  objects: [
    httpRouteObject("matching", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        rule("infra-backend-v1", headers(["version", "one"])),
        rule("infra-backend-v2", headers(["version", "two"])),
        rule("infra-backend-v1", headers(["version", "two"], ["color", "orange"])),
        rule("infra-backend-v1", headers(["color", "blue"]), headers(["color", "green"])),
        rule("infra-backend-v2", headers(["color", "red"]), headers(["color", "yellow"])),
      ],
    }),
  ],
  routes: [{ name: "matching" }],
  cases: [
    { path: "/", headers: { Version: "one" }, backend: "infra-backend-v1" },
    { path: "/", headers: { Version: "two" }, backend: "infra-backend-v2" },
    { path: "/", headers: { Version: "two", Color: "orange" }, backend: "infra-backend-v1" },
    { path: "/", headers: { Version: "two", Color: "blue" }, backend: "infra-backend-v2" },
    { path: "/", headers: { Color: "orange" }, status: 404 },
    { path: "/", headers: { "Some-Other-Header": "one" }, status: 404 },
    { path: "/", headers: { Color: "blue" }, backend: "infra-backend-v1" },
    { path: "/", headers: { Color: "green" }, backend: "infra-backend-v1" },
    { path: "/", headers: { Color: "red" }, backend: "infra-backend-v2" },
    { path: "/", headers: { Color: "yellow" }, backend: "infra-backend-v2" },
    { path: "/", headers: { Color: "purple" }, status: 404 },
  ],
});

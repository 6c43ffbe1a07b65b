import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteCORS: the router answers preflights itself (200, no backend) with the Access-Control-*
 * fields of the rule's CORS filter, for exact and `*.` wildcard origins; an origin not allowed gets none; a
 * simple request is proxied and its answer carries Access-Control-Allow-Origin. With credentials allowed, the
 * origin, method and headers are echoed (Fetch forbids `*` then); without, a `*` origin is answered `*`.
 * The official manifest's fourth route covers both `/cors-wildcard-methods-headers` (credentials) and its
 * `-unauth` sibling (no credentials); here they are two rules of that route.
 */
const cors = (path: string, filter: Record<string, unknown>) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "CORS", cors: filter }],
  backendRefs: [backend("infra-backend-v1")],
});
const route = (name: string, rules: Record<string, unknown>[]) =>
  httpRouteObject(name, { parentRefs: [{ name: "same-namespace" }], rules });
const preflight = (origin: string, method: string, headers?: string) => ({
  method: "OPTIONS",
  headers: {
    origin,
    "access-control-request-method": method,
    ...(headers ? { "access-control-request-headers": headers } : {}),
  },
});
const allowedFromCors1 = (origin: string) => ({
  "access-control-allow-origin": origin,
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "x-header-1, x-header-2",
  "access-control-expose-headers": "x-header-3, x-header-4",
  "access-control-max-age": "3600",
  "access-control-allow-credentials": "true",
});
const v1 = "infra-backend-v1";

describeRoutingConformance("HTTPRouteCORS", {
  objects: [
    route("cors-multiple-origins-methods-headers", [
      cors("/cors-1", {
        allowOrigins: ["https://www.foo.com", "https://*.bar.com"],
        allowMethods: ["GET", "OPTIONS"],
        allowHeaders: ["x-header-1", "x-header-2"],
        exposeHeaders: ["x-header-3", "x-header-4"],
        allowCredentials: true,
        maxAge: 3600,
      }),
    ]),
    route("cors-wildcard-methods", [
      cors("/cors-2", { allowOrigins: ["https://www.foo.com"], allowMethods: ["*"] }),
    ]),
    route("cors-wildcard-origin", [
      cors("/cors-wildcard-origin", { allowOrigins: ["*"], allowMethods: ["PUT"], allowCredentials: false }),
    ]),
    route("cors-wildcard-methods-headers", [
      cors("/cors-wildcard-methods-headers", {
        allowOrigins: ["https://other.foo.com"],
        allowMethods: ["*"],
        allowHeaders: ["*"],
        allowCredentials: true,
      }),
      cors("/cors-wildcard-methods-headers-unauth", {
        allowOrigins: ["https://other.foo.com"],
        allowMethods: ["*"],
        allowHeaders: ["*"],
      }),
    ]),
  ],
  routes: [
    { name: "cors-multiple-origins-methods-headers" },
    { name: "cors-wildcard-methods" },
    { name: "cors-wildcard-origin" },
    { name: "cors-wildcard-methods-headers" },
  ],
  cases: [
    // Simple requests first: the fixture waits for the first case that reaches a backend.
    {
      path: "/cors-1",
      headers: { origin: "https://www.foo.com", "access-control-request-method": "GET" },
      backend: v1,
      answered: { "access-control-allow-origin": "https://www.foo.com" },
    },
    {
      path: "/cors-1",
      headers: { origin: "https://www.bar.com" },
      backend: v1,
      answered: { "access-control-allow-origin": "https://www.bar.com" },
    },
    {
      path: "/cors-1",
      headers: { origin: "https://foobar.com" },
      backend: v1,
      answered: { "access-control-allow-origin": undefined },
    },
    {
      path: "/cors-1",
      ...preflight("https://www.foo.com", "GET", "x-header-1, x-header-2"),
      status: 200,
      answered: allowedFromCors1("https://www.foo.com"),
    },
    {
      path: "/cors-1",
      ...preflight("https://www.bar.com", "GET", "x-header-1, x-header-2"),
      status: 200,
      answered: allowedFromCors1("https://www.bar.com"),
    },
    {
      path: "/cors-1",
      ...preflight("https://xpto.www.bar.com", "GET", "x-header-1, x-header-2"),
      status: 200,
      answered: allowedFromCors1("https://xpto.www.bar.com"),
    },
    {
      path: "/cors-1",
      ...preflight("https://foobar.com", "GET"),
      status: 200,
      answered: { "access-control-allow-origin": undefined, "access-control-allow-methods": undefined },
    },
    {
      path: "/cors-2",
      ...preflight("https://www.foo.com", "POST"),
      status: 200,
      answered: {
        "access-control-allow-origin": "https://www.foo.com",
        "access-control-allow-methods": "POST",
        "access-control-allow-credentials": undefined,
      },
    },
    {
      path: "/cors-wildcard-origin",
      ...preflight("https://foobar.com", "PUT"),
      status: 200,
      answered: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "PUT",
        "access-control-allow-credentials": undefined,
      },
    },
    {
      path: "/cors-wildcard-origin",
      ...preflight("https://foobar.com:12345", "PUT"),
      status: 200,
      answered: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "PUT",
        "access-control-allow-credentials": undefined,
      },
    },
    {
      path: "/cors-wildcard-origin",
      method: "PUT",
      headers: { origin: "https://foobar.com:12345" },
      backend: v1,
      answered: { "access-control-allow-origin": "*" },
    },
    {
      path: "/cors-wildcard-origin",
      method: "PUT",
      headers: { origin: "https://foobar.com" },
      backend: v1,
      answered: { "access-control-allow-origin": "*", "access-control-allow-credentials": undefined },
    },
    {
      path: "/cors-wildcard-methods-headers",
      ...preflight("https://other.foo.com", "PUT", "x-header-1, x-header-2"),
      status: 200,
      answered: {
        "access-control-allow-origin": "https://other.foo.com",
        "access-control-allow-methods": "PUT",
        "access-control-allow-headers": "x-header-1, x-header-2",
        "access-control-allow-credentials": "true",
      },
    },
    {
      path: "/cors-wildcard-methods-headers-unauth",
      ...preflight("https://other.foo.com", "PUT", "x-header-1, x-header-2"),
      status: 200,
      answered: {
        "access-control-allow-origin": "https://other.foo.com",
        "access-control-allow-methods": "PUT",
        "access-control-allow-headers": "x-header-1, x-header-2",
        "access-control-allow-credentials": undefined,
      },
    },
    {
      path: "/cors-wildcard-methods-headers",
      headers: { origin: "https://other.foo.com", authorization: "Bearer test" },
      backend: v1,
      answered: {
        "access-control-allow-origin": "https://other.foo.com",
        "access-control-allow-credentials": "true",
      },
    },
    {
      path: "/cors-wildcard-methods-headers-unauth",
      headers: { origin: "https://other.foo.com", authorization: "Bearer test" },
      backend: v1,
      answered: {
        "access-control-allow-origin": "https://other.foo.com",
        "access-control-allow-credentials": undefined,
      },
    },
  ],
});

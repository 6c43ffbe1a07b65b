import { httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRedirectPort: a RequestRedirect to port 8083, alone and with a hostname or a status
 * code. The port is written into the Location since it is not the scheme's well-known one.
 */
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "RequestRedirect", requestRedirect: { port: 8083, ...requestRedirect } }],
});

describeRoutingConformance("HTTPRouteRedirectPort", {
  objects: [
    httpRouteObject("redirect-port", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        redirect("/port", {}),
        redirect("/port-and-host", { hostname: "example.org" }),
        redirect("/port-and-status", { statusCode: 301 }),
        redirect("/port-and-host-and-status", { hostname: "example.org", statusCode: 302 }),
        redirect("/port-and-temporary", { hostname: "example.org", statusCode: 307 }),
        redirect("/port-and-permanent", { hostname: "example.org", statusCode: 308 }),
      ],
    }),
  ],
  routes: [{ name: "redirect-port" }],
  cases: [
    { path: "/port", status: 302, answered: { location: "http://127.0.0.1:8083/port" } },
    { path: "/port-and-host", status: 302, answered: { location: "http://example.org:8083/port-and-host" } },
    {
      path: "/port-and-status",
      status: 301,
      answered: { location: "http://127.0.0.1:8083/port-and-status" },
    },
    {
      path: "/port-and-host-and-status",
      status: 302,
      answered: { location: "http://example.org:8083/port-and-host-and-status" },
    },
    {
      path: "/port-and-temporary",
      status: 307,
      answered: { location: "http://example.org:8083/port-and-temporary" },
    },
    {
      path: "/port-and-permanent",
      status: 308,
      answered: { location: "http://example.org:8083/port-and-permanent" },
    },
  ],
});

import { httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/** Conformance HTTPRouteRedirectHostAndStatus: a RequestRedirect to another hostname, 302 by default or 301. */
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "RequestRedirect", requestRedirect }],
});

describeRoutingConformance("HTTPRouteRedirectHostAndStatus", {
  objects: [
    httpRouteObject("redirect-host-and-status", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        redirect("/hostname-redirect", { hostname: "example.org" }),
        redirect("/host-and-status", { hostname: "example.org", statusCode: 301 }),
      ],
    }),
  ],
  routes: [{ name: "redirect-host-and-status" }],
  cases: [
    {
      path: "/hostname-redirect",
      status: 302,
      answered: { location: "http://example.org/hostname-redirect" },
    },
    { path: "/host-and-status", status: 301, answered: { location: "http://example.org/host-and-status" } },
  ],
});

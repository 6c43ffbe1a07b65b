import { httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRedirectScheme: a RequestRedirect to https, alone and with a hostname or a status
 * code. Without a port the redirect goes to the new scheme's well-known port (443), which the Location leaves
 * out (HTTPRequestRedirectFilter.port).
 */
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", ...requestRedirect } }],
});

describeRoutingConformance("HTTPRouteRedirectScheme", {
  objects: [
    httpRouteObject("redirect-scheme", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        redirect("/scheme", {}),
        redirect("/scheme-and-host", { hostname: "example.org" }),
        redirect("/scheme-and-status", { statusCode: 301 }),
        redirect("/scheme-and-host-and-status", { hostname: "example.org", statusCode: 302 }),
      ],
    }),
  ],
  routes: [{ name: "redirect-scheme" }],
  cases: [
    { path: "/scheme", status: 302, answered: { location: "https://127.0.0.1/scheme" } },
    { path: "/scheme-and-host", status: 302, answered: { location: "https://example.org/scheme-and-host" } },
    {
      path: "/scheme-and-status",
      status: 301,
      answered: { location: "https://127.0.0.1/scheme-and-status" },
    },
    {
      path: "/scheme-and-host-and-status",
      status: 302,
      answered: { location: "https://example.org/scheme-and-host-and-status" },
    },
  ],
});

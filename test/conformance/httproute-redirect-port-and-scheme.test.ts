import { gatewayObject, httpListener, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRedirectPortAndScheme, its HTTP listeners on 80 and 8080: redirects to example.org
 * with and without a scheme and a port. HTTPRequestRedirectFilter.port: without a port, a redirect that names
 * a scheme goes to that scheme's well-known port and one that does not goes to the listener's port; a port
 * that is its scheme's well-known one is left out of the Location. The suite's third part, over the HTTPS
 * listener on 443, needs the Gateway's TLS (conformance tests of the HTTPS profile).
 */
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
  matches: [{ path: { type: "Exact", value: path } }],
  filters: [
    {
      type: "RequestRedirect",
      requestRedirect: { hostname: "example.org", statusCode: 302, ...requestRedirect },
    },
  ],
});
const LISTENER_8080 = "same-namespace-with-http-listener-on-8080";
const found = (path: string, location: string, host?: string) => ({
  path,
  status: 302,
  ...(host ? { host } : {}),
  answered: { location: `${location}${path}` },
});

describeRoutingConformance("HTTPRouteRedirectPortAndScheme", {
  objects: [
    gatewayObject(LISTENER_8080, [
      httpListener("http", 8080, { allowedRoutes: { namespaces: { from: "Same" } } }),
    ]),
    httpRouteObject("http-route-for-listener-on-port-80", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        redirect("/scheme-nil-and-port-nil", {}),
        redirect("/scheme-nil-and-port-80", { port: 80 }),
        redirect("/scheme-nil-and-port-8080", { port: 8080 }),
        redirect("/scheme-https-and-port-nil", { scheme: "https" }),
        redirect("/scheme-https-and-port-443", { scheme: "https", port: 443 }),
        redirect("/scheme-https-and-port-8443", { scheme: "https", port: 8443 }),
      ],
    }),
    httpRouteObject("http-route-for-listener-on-port-8080", {
      parentRefs: [{ name: LISTENER_8080 }],
      rules: [
        redirect("/scheme-nil-and-port-nil", {}),
        redirect("/scheme-nil-and-port-80", { port: 80 }),
        redirect("/scheme-https-and-port-nil", { scheme: "https" }),
      ],
    }),
  ],
  routes: [{ name: "http-route-for-listener-on-port-80" }, { name: "http-route-for-listener-on-port-8080" }],
  cases: [
    found("/scheme-nil-and-port-nil", "http://example.org"),
    found("/scheme-nil-and-port-80", "http://example.org"),
    found("/scheme-nil-and-port-8080", "http://example.org:8080"),
    found("/scheme-https-and-port-nil", "https://example.org"),
    found("/scheme-https-and-port-443", "https://example.org"),
    found("/scheme-https-and-port-8443", "https://example.org:8443"),
    found("/scheme-nil-and-port-nil", "http://example.org:8080", "127.0.0.1:8080"),
    found("/scheme-nil-and-port-80", "http://example.org", "127.0.0.1:8080"),
    found("/scheme-https-and-port-nil", "https://example.org", "127.0.0.1:8080"),
  ],
});

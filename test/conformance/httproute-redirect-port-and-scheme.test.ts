import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, httpListener, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";
import {
  httpsBaseObjects,
  startTlsConformance,
  type TlsConformance,
  untilTrue,
} from "./support/tls-fixture.js";

/**
 * Conformance HTTPRouteRedirectPortAndScheme, its HTTP listeners on 80 and 8080: redirects to example.org
 * with and without a scheme and a port. HTTPRequestRedirectFilter.port: without a port, a redirect that names
 * a scheme goes to that scheme's well-known port and one that does not goes to the listener's port; a port
 * that is its scheme's well-known one is left out of the Location. The third part goes through the HTTPS
 * listener on 443, where the scheme kept is https.
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

const listener8080 = gatewayObject(LISTENER_8080, [
  httpListener("http", 8080, { allowedRoutes: { namespaces: { from: "Same" } } }),
]);

// One world per listener, so each waits until its own route is served before its cases run.
describeRoutingConformance("HTTPRouteRedirectPortAndScheme (HTTP listener on 80)", {
  objects: [
    listener8080,
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
  ],
  routes: [{ name: "http-route-for-listener-on-port-80" }],
  cases: [
    found("/scheme-nil-and-port-nil", "http://example.org"),
    found("/scheme-nil-and-port-80", "http://example.org"),
    found("/scheme-nil-and-port-8080", "http://example.org:8080"),
    found("/scheme-https-and-port-nil", "https://example.org"),
    found("/scheme-https-and-port-443", "https://example.org"),
    found("/scheme-https-and-port-8443", "https://example.org:8443"),
  ],
});

describeRoutingConformance("HTTPRouteRedirectPortAndScheme (HTTP listener on 8080)", {
  objects: [
    listener8080,
    httpRouteObject("http-route-for-listener-on-port-8080", {
      parentRefs: [{ name: LISTENER_8080 }],
      rules: [
        redirect("/scheme-nil-and-port-nil", {}),
        redirect("/scheme-nil-and-port-80", { port: 80 }),
        redirect("/scheme-https-and-port-nil", { scheme: "https" }),
      ],
    }),
  ],
  routes: [{ name: "http-route-for-listener-on-port-8080" }],
  cases: [
    found("/scheme-nil-and-port-nil", "http://example.org:8080", "127.0.0.1:8080"),
    found("/scheme-nil-and-port-80", "http://example.org", "127.0.0.1:8080"),
    found("/scheme-https-and-port-nil", "https://example.org", "127.0.0.1:8080"),
  ],
});

/** GET `path` over TLS to the router's HTTPS listener, SNI and Host example.org: the status and Location. */
function httpsRedirect(
  port: number,
  path: string,
): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: "127.0.0.1",
        port,
        path,
        servername: "example.org",
        headers: { host: "example.org" },
        rejectUnauthorized: false,
      },
      (answer) => {
        answer.resume();
        resolve({ status: answer.statusCode ?? 0, location: answer.headers.location });
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

describe("conformance HTTPRouteRedirectPortAndScheme over the HTTPS listener on 443", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "redirect-443",
      objects: [
        ...httpsBaseObjects(),
        httpRouteObject("http-route-for-listener-on-port-443", {
          parentRefs: [{ name: "same-namespace-with-https-listener" }],
          rules: [
            redirect("/scheme-nil-and-port-nil", {}),
            redirect("/scheme-nil-and-port-443", { port: 443 }),
            redirect("/scheme-nil-and-port-8443", { port: 8443 }),
            redirect("/scheme-http-and-port-nil", { scheme: "http" }),
            redirect("/scheme-http-and-port-80", { scheme: "http", port: 80 }),
            redirect("/scheme-http-and-port-8080", { scheme: "http", port: 8080 }),
          ],
        }),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it.each([
    ["/scheme-nil-and-port-nil", "https://example.org"],
    ["/scheme-nil-and-port-443", "https://example.org"],
    ["/scheme-nil-and-port-8443", "https://example.org:8443"],
    ["/scheme-http-and-port-nil", "http://example.org"],
    ["/scheme-http-and-port-80", "http://example.org"],
    ["/scheme-http-and-port-8080", "http://example.org:8080"],
  ])("redirects %s to %s", async (path, origin) => {
    const answer = await untilTrue(
      () => httpsRedirect(world.httpsPort, path).catch(() => ({ status: 0, location: undefined })),
      (found) => found.status === 302,
    );
    expect(answer).toEqual({ status: 302, location: `${origin}${path}` });
  });
});

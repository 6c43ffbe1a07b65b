import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteCORSAllowCredentialsBehavior: Access-Control-Allow-Credentials comes only from a CORS
 * filter with allowCredentials true, and only next to an Access-Control-Allow-Origin for an allowed origin;
 * a request with cookies and Authorization from an origin not allowed is proxied without either field.
 */
const ORIGIN = "https://app.example";
const withCredentials = (path: string, allowCredentials: boolean) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "CORS", cors: { allowOrigins: [ORIGIN], allowMethods: ["GET"], allowCredentials } }],
  backendRefs: [backend("infra-backend-v1")],
});
const credentials = (origin: string) => ({ origin, cookie: "sid=abc123", authorization: "Bearer test" });
const v1 = "infra-backend-v1";

describeRoutingConformance("HTTPRouteCORSAllowCredentialsBehavior", {
  objects: [
    httpRouteObject("cors-allow-credentials", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        withCredentials("/cors-behavior-creds-false", false),
        withCredentials("/cors-behavior-creds-true", true),
      ],
    }),
  ],
  routes: [{ name: "cors-allow-credentials" }],
  cases: [
    {
      path: "/cors-behavior-creds-false",
      headers: credentials(ORIGIN),
      backend: v1,
      answered: { "access-control-allow-origin": ORIGIN, "access-control-allow-credentials": undefined },
    },
    {
      path: "/cors-behavior-creds-true",
      headers: credentials("http://not-app.example"),
      backend: v1,
      answered: { "access-control-allow-origin": undefined, "access-control-allow-credentials": undefined },
    },
    {
      path: "/cors-behavior-creds-true",
      headers: credentials(ORIGIN),
      backend: v1,
      answered: { "access-control-allow-origin": ORIGIN, "access-control-allow-credentials": "true" },
    },
  ],
});

import { httpRouteObject, prefixMatch } from "./conformance-base.js";
import { describeRoutingConformance } from "./routing-cases.js";

/**
 * The official one-redirect tests of the extra status codes (HTTPRoute303/307/308RedirectStatusCode, alone or
 * with HTTPRouteSchemeRedirect): one route, one RequestRedirect rule, one request answered by the router with
 * that status and a Location to the same host and path, on `https` when the redirect sets the scheme.
 */
export function describeStatusRedirect(
  name: string,
  options: {
    readonly route: string;
    readonly path: string;
    readonly statusCode: 303 | 307 | 308;
    readonly scheme?: "https";
    readonly method?: string;
  },
): void {
  const { route, path, statusCode, scheme } = options;
  describeRoutingConformance(name, {
    objects: [
      httpRouteObject(route, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch(path)],
            filters: [
              { type: "RequestRedirect", requestRedirect: { statusCode, ...(scheme ? { scheme } : {}) } },
            ],
          },
        ],
      }),
    ],
    routes: [{ name: route }],
    cases: [
      {
        path,
        ...(options.method ? { method: options.method } : {}),
        status: statusCode,
        answered: { location: `${scheme ?? "http"}://127.0.0.1${path}` },
      },
    ],
  });
}

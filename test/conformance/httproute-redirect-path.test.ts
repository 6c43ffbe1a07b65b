import { httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRedirectPath: RequestRedirect path modifiers, ReplacePrefixMatch (the matched prefix
 * replaced, the rest kept) and ReplaceFullPath, alone and with a hostname or a status code.
 */
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "RequestRedirect", requestRedirect }],
});
const prefix = { type: "ReplacePrefixMatch", replacePrefixMatch: "/replacement-prefix" };
const full = (replaceFullPath: string) => ({ type: "ReplaceFullPath", replaceFullPath });

describeRoutingConformance("HTTPRouteRedirectPath", {
  objects: [
    httpRouteObject("redirect-path", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        redirect("/original-prefix", { path: prefix }),
        redirect("/full", { path: full("/full-path-replacement") }),
        redirect("/path-and-host", { hostname: "example.org", path: prefix }),
        redirect("/path-and-status", { path: prefix, statusCode: 301 }),
        redirect("/full-path-and-host", { hostname: "example.org", path: full("/replacement-full") }),
        redirect("/full-path-and-status", { path: full("/replacement-full"), statusCode: 301 }),
      ],
    }),
  ],
  routes: [{ name: "redirect-path" }],
  cases: [
    {
      path: "/original-prefix/lemon",
      status: 302,
      answered: { location: "http://127.0.0.1/replacement-prefix/lemon" },
    },
    {
      path: "/full/path/original",
      status: 302,
      answered: { location: "http://127.0.0.1/full-path-replacement" },
    },
    { path: "/path-and-host", status: 302, answered: { location: "http://example.org/replacement-prefix" } },
    { path: "/path-and-status", status: 301, answered: { location: "http://127.0.0.1/replacement-prefix" } },
    {
      path: "/full-path-and-host",
      status: 302,
      answered: { location: "http://example.org/replacement-full" },
    },
    {
      path: "/full-path-and-status",
      status: 301,
      answered: { location: "http://127.0.0.1/replacement-full" },
    },
  ],
});

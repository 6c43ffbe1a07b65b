import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRewritePath: URLRewrite ReplacePrefixMatch (including to "/") and ReplaceFullPath, alone
 * and next to a RequestHeaderModifier.
 */
const headerModifier = {
  type: "RequestHeaderModifier",
  requestHeaderModifier: {
    set: [{ name: "X-Header-Set", value: "set-overwrites-values" }],
    add: [
      { name: "X-Header-Add", value: "header-val-1" },
      { name: "X-Header-Add-Append", value: "header-val-2" },
    ],
    remove: ["X-Header-Remove"],
  },
};
const rewrite = (path: string, modifier: Record<string, string>, ...more: Record<string, unknown>[]) => ({
  matches: [prefixMatch(path)],
  filters: [{ type: "URLRewrite", urlRewrite: { path: modifier } }, ...more],
  backendRefs: [backend("infra-backend-v1")],
});
const v1 = "infra-backend-v1";
const sent = {
  "X-Header-Remove": "remove-val",
  "X-Header-Add-Append": "append-val-1",
  "X-Header-Set": "set-val",
};
const received = {
  "x-header-add": "header-val-1",
  "x-header-add-append": "append-val-1, header-val-2",
  "x-header-set": "set-overwrites-values",
  "x-header-remove": undefined,
};

describeRoutingConformance("HTTPRouteRewritePath", {
  objects: [
    httpRouteObject("rewrite-path", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        rewrite("/prefix/one", { type: "ReplacePrefixMatch", replacePrefixMatch: "/one" }),
        rewrite("/strip-prefix", { type: "ReplacePrefixMatch", replacePrefixMatch: "/" }),
        rewrite("/full/one", { type: "ReplaceFullPath", replaceFullPath: "/one" }),
        rewrite(
          "/full/rewrite-path-and-modify-headers",
          { type: "ReplaceFullPath", replaceFullPath: "/test" },
          headerModifier,
        ),
        rewrite(
          "/prefix/rewrite-path-and-modify-headers",
          { type: "ReplacePrefixMatch", replacePrefixMatch: "/prefix" },
          headerModifier,
        ),
      ],
    }),
  ],
  routes: [{ name: "rewrite-path" }],
  cases: [
    { path: "/prefix/one/two", backend: v1, seenPath: "/one/two" },
    { path: "/strip-prefix/three", backend: v1, seenPath: "/three" },
    { path: "/strip-prefix", backend: v1, seenPath: "/" },
    { path: "/full/one/two", backend: v1, seenPath: "/one" },
    {
      path: "/full/rewrite-path-and-modify-headers/test",
      headers: sent,
      backend: v1,
      seenPath: "/test",
      seen: received,
    },
    {
      path: "/prefix/rewrite-path-and-modify-headers/one",
      headers: sent,
      backend: v1,
      seenPath: "/prefix/one",
      seen: received,
    },
  ],
});

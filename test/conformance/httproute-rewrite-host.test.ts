import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRewriteHost: URLRewrite hostname, the Host the backend receives, alone and next to a
 * RequestHeaderModifier; the path is left as it came.
 */
const rewrite = (hostname: string) => ({ type: "URLRewrite", urlRewrite: { hostname } });
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
const HOST = "rewrite.example";

describeRoutingConformance("HTTPRouteRewriteHost", {
  objects: [
    httpRouteObject("rewrite-host", {
      hostnames: [HOST],
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        {
          matches: [prefixMatch("/one")],
          filters: [rewrite("one.example.org")],
          backendRefs: [backend("infra-backend-v1")],
        },
        { filters: [rewrite("example.org")], backendRefs: [backend("infra-backend-v2")] },
        {
          matches: [prefixMatch("/rewrite-host-and-modify-headers")],
          filters: [rewrite("test.example.org"), headerModifier],
          backendRefs: [backend("infra-backend-v2")],
        },
      ],
    }),
  ],
  routes: [{ name: "rewrite-host" }],
  cases: [
    {
      host: HOST,
      path: "/one",
      backend: "infra-backend-v1",
      seenPath: "/one",
      seen: { host: "one.example.org" },
    },
    {
      host: HOST,
      path: "/two",
      backend: "infra-backend-v2",
      seenPath: "/two",
      seen: { host: "example.org" },
    },
    {
      host: HOST,
      path: "/rewrite-host-and-modify-headers",
      headers: { "X-Header-Remove": "remove-val", "X-Header-Add-Append": "append-val-1" },
      backend: "infra-backend-v2",
      seenPath: "/rewrite-host-and-modify-headers",
      seen: {
        host: "test.example.org",
        "x-header-add": "header-val-1",
        "x-header-add-append": "append-val-1, header-val-2",
        "x-header-set": "set-overwrites-values",
        "x-header-remove": undefined,
      },
    },
  ],
});

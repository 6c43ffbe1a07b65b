import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteBackendURLRewrite: a URLRewrite on a backendRef rewrites the path sent to that backend,
 * the whole path (ReplaceFullPath) or the matched prefix (ReplacePrefixMatch).
 */
const rewritten = (path: string, rewritePath: Record<string, string>) => ({
  matches: [prefixMatch(path)],
  backendRefs: [
    backend("infra-backend-v1", { filters: [{ type: "URLRewrite", urlRewrite: { path: rewritePath } }] }),
  ],
});
const v1 = "infra-backend-v1";

describeRoutingConformance("HTTPRouteBackendURLRewrite", {
  objects: [
    httpRouteObject("backend-url-rewrite", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        rewritten("/full", { type: "ReplaceFullPath", replaceFullPath: "/rewritten-full" }),
        rewritten("/prefix", { type: "ReplacePrefixMatch", replacePrefixMatch: "/rewritten-prefix" }),
      ],
    }),
  ],
  routes: [{ name: "backend-url-rewrite" }],
  cases: [
    { path: "/full/original", backend: v1, seenPath: "/rewritten-full" },
    { path: "/prefix/original", backend: v1, seenPath: "/rewritten-prefix/original" },
  ],
});

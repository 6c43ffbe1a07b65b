import { describe, expect, it } from "vitest";
import type { Result } from "../../../../lib/result.js";
import { type GRPCRoute, parseGRPCRoute } from "../../../../sync/translate/gateway/grpc-route.js";
import { httpRoute, translate } from "./fixtures.js";

/**
 * The route records and statuses every kind of filter translates to, byte for byte, against a file written
 * before the filters became one module per kind (issue 39): routers of the previous version read these
 * records, so a change here is a change of the store format, never a refactoring.
 */

type Json = Record<string, unknown>;

const v1 = { name: "infra-backend-v1", port: 8080 };
const toV1 = { backendRefs: [v1] };
const prefix = (value: string) => ({ matches: [{ path: { type: "PathPrefix", value } }] });
const exact = (value: string) => ({ matches: [{ path: { type: "Exact", value } }] });

const reqHeaders = (modifier: Json) => ({ type: "RequestHeaderModifier", requestHeaderModifier: modifier });
const respHeaders = (modifier: Json) => ({
  type: "ResponseHeaderModifier",
  responseHeaderModifier: modifier,
});
const redirect = (requestRedirect: Json) => ({ type: "RequestRedirect", requestRedirect });
const rewrite = (urlRewrite: Json) => ({ type: "URLRewrite", urlRewrite });
const mirror = (requestMirror: Json) => ({ type: "RequestMirror", requestMirror });
const cors = (value: Json) => ({ type: "CORS", cors: value });
const modifier = {
  set: [{ name: "X-Set", value: "one" }],
  add: [{ name: "x-Add", value: "two" }],
  remove: ["X-Gone"],
};
const fullCors = {
  allowOrigins: ["https://Shop.Example", "https://*.example.test:8443"],
  allowMethods: ["GET", "POST"],
  allowHeaders: ["X-Client"],
  exposeHeaders: ["X-Exposed"],
  allowCredentials: true,
  maxAge: 600,
};

/** One rule (or rules) per route, named by what it holds. */
const RULES: Record<string, Json[]> = {
  "request-headers": [{ filters: [reqHeaders(modifier)], ...toV1 }],
  "response-headers": [{ filters: [respHeaders(modifier)], ...toV1 }],
  "both-headers-first-wins": [
    {
      filters: [
        reqHeaders({ set: [{ name: "a", value: "1" }] }),
        respHeaders({ remove: ["b"] }),
        reqHeaders({ set: [{ name: "c", value: "3" }] }),
      ],
      ...toV1,
    },
  ],
  "header-empty-lists": [{ filters: [reqHeaders({})], ...toV1 }],
  "header-bad-name": [{ filters: [reqHeaders({ set: [{ name: "a b", value: "1" }] })], ...toV1 }],
  "header-bad-value": [{ filters: [respHeaders({ add: [{ name: "a", value: "x\r\ny" }] })], ...toV1 }],
  "header-field-missing": [{ filters: [{ type: "RequestHeaderModifier" }], ...toV1 }],
  "redirect-defaults": [{ filters: [redirect({})] }],
  "redirect-full": [
    {
      filters: [
        redirect({
          scheme: "https",
          hostname: "UPPER.Example.test",
          port: 8443,
          statusCode: 301,
          path: { type: "ReplaceFullPath", replaceFullPath: "/moved" },
        }),
      ],
    },
  ],
  "redirect-empty-prefix": [
    {
      ...prefix("/old"),
      filters: [redirect({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "" } })],
    },
  ],
  "redirect-prefix-exact": [
    {
      ...exact("/old"),
      filters: [redirect({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/n" } })],
    },
  ],
  "redirect-with-backends": [{ filters: [redirect({ scheme: "https" })], ...toV1 }],
  "redirect-with-rewrite": [{ filters: [redirect({}), rewrite({ hostname: "a.test" })] }],
  "redirect-status-305": [{ filters: [redirect({ statusCode: 305 })] }],
  "redirect-scheme-ftp": [{ filters: [redirect({ scheme: "ftp" })] }],
  "redirect-port-0": [{ filters: [redirect({ port: 0 })] }],
  "redirect-wildcard-host": [{ filters: [redirect({ hostname: "*.evil.test" })] }],
  "redirect-path-unknown": [{ filters: [redirect({ path: { type: "Other", replaceFullPath: "/x" } })] }],
  "rewrite-host": [{ filters: [rewrite({ hostname: "Backend.Example" })], ...toV1 }],
  "rewrite-full-path": [
    { filters: [rewrite({ path: { type: "ReplaceFullPath", replaceFullPath: "/x/y" } })], ...toV1 },
  ],
  "rewrite-prefix": [
    {
      ...prefix("/api/"),
      filters: [rewrite({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } })],
      ...toV1,
    },
  ],
  "rewrite-no-slash": [
    { filters: [rewrite({ path: { type: "ReplaceFullPath", replaceFullPath: "abc" } })], ...toV1 },
  ],
  "rewrite-field-missing": [{ filters: [{ type: "URLRewrite" }], ...toV1 }],
  "mirror-percent": [
    { filters: [mirror({ backendRef: { name: "infra-backend-v2", port: 8080 }, percent: 50 })], ...toV1 },
  ],
  "mirror-fraction": [
    {
      filters: [
        mirror({
          backendRef: { name: "infra-backend-v2", port: 8080 },
          fraction: { numerator: 1, denominator: 3 },
        }),
      ],
      ...toV1,
    },
  ],
  "mirror-two": [
    {
      filters: [
        mirror({ backendRef: { name: "infra-backend-v2", port: 8080 } }),
        reqHeaders({ set: [{ name: "a", value: "1" }] }),
        mirror({ backendRef: { name: "infra-backend-v3", port: 8080 }, fraction: { numerator: 5 } }),
      ],
      ...toV1,
    },
  ],
  "mirror-unresolved": [{ filters: [mirror({ backendRef: { name: "nowhere", port: 8080 } })], ...toV1 }],
  "mirror-fraction-above-one": [
    {
      filters: [
        mirror({
          backendRef: { name: "infra-backend-v2", port: 8080 },
          fraction: { numerator: 3, denominator: 2 },
        }),
      ],
      ...toV1,
    },
  ],
  "mirror-percent-101": [
    { filters: [mirror({ backendRef: { name: "infra-backend-v2", port: 8080 }, percent: 101 })], ...toV1 },
  ],
  "mirror-no-backend": [{ filters: [mirror({})], ...toV1 }],
  "cors-full": [{ filters: [cors(fullCors)], ...toV1 }],
  "cors-defaults": [{ filters: [cors({})], ...toV1 }],
  "cors-missing-field": [{ filters: [{ type: "CORS" }], ...toV1 }],
  "cors-two": [{ filters: [cors({}), cors({ maxAge: 9 })], ...toV1 }],
  "cors-bad-origin": [{ filters: [cors({ allowOrigins: ["https://a.test/path"] })], ...toV1 }],
  "cors-bad-method": [{ filters: [cors({ allowMethods: ["FETCH"] })], ...toV1 }],
  "cors-bad-header": [{ filters: [cors({ exposeHeaders: ["a b"] })], ...toV1 }],
  "extension-ref": [
    { filters: [{ type: "ExtensionRef", extensionRef: { group: "x", kind: "Y", name: "z" } }], ...toV1 },
  ],
  "unknown-type": [{ filters: [{ type: "Future" }], ...toV1 }],
  "cors-bad-then-extension-ref": [
    { filters: [cors({ allowMethods: ["FETCH"] }), { type: "ExtensionRef" }], ...toV1 },
  ],
  "mirror-bad-then-cors-bad": [
    {
      filters: [
        cors({ allowMethods: ["FETCH"] }),
        mirror({ backendRef: { name: "infra-backend-v2" }, percent: 101 }),
      ],
      ...toV1,
    },
  ],
  "cors-bad-redirect-rewrite": [{ filters: [cors({ allowMethods: ["FETCH"] }), redirect({}), rewrite({})] }],
  "every-kind": [
    {
      ...prefix("/shop"),
      filters: [
        cors(fullCors),
        reqHeaders(modifier),
        mirror({ backendRef: { name: "infra-backend-v3", port: 8080 }, percent: 10 }),
        respHeaders({ set: [{ name: "X-Out", value: "o" }] }),
        rewrite({ hostname: "in.test", path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/store" } }),
      ],
      backendRefs: [
        { ...v1, weight: 2, filters: [reqHeaders({ add: [{ name: "X-Backend", value: "v1" }] })] },
        { name: "infra-backend-v2", port: 8080, weight: 1 },
      ],
    },
    { filters: [redirect({ scheme: "https", statusCode: 308 })] },
  ],
  "backend-filters": [
    {
      ...prefix("/b"),
      backendRefs: [
        {
          ...v1,
          filters: [
            reqHeaders({ set: [{ name: "X-A", value: "1" }] }),
            respHeaders({ remove: ["X-B"] }),
            rewrite({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/c" } }),
          ],
        },
      ],
    },
  ],
  "backend-redirect": [{ backendRefs: [{ ...v1, filters: [redirect({})] }] }],
  "backend-mirror": [
    { backendRefs: [{ ...v1, filters: [mirror({ backendRef: { name: "infra-backend-v2", port: 8080 } })] }] },
  ],
  "backend-cors": [{ backendRefs: [{ ...v1, filters: [cors({})] }] }],
  "backend-prefix-exact": [
    {
      ...exact("/e"),
      backendRefs: [
        { ...v1, filters: [rewrite({ path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/c" } })] },
      ],
    },
  ],
  "backend-bad-header": [{ backendRefs: [{ ...v1, filters: [reqHeaders({ remove: ["a\nb"] })] }] }],
};

function grpcRoute(name: string, rules: Json[]): GRPCRoute {
  const result: Result<GRPCRoute> = parseGRPCRoute({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GRPCRoute",
    metadata: { name, namespace: "infra", generation: 4, creationTimestamp: "2024-01-01T00:00:00Z" },
    spec: { parentRefs: [{ name: "gw" }], hostnames: [`${name}.grpc.test`], rules },
  });
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

const GRPC_RULES: Record<string, Json[]> = {
  "grpc-filters": [
    {
      filters: [reqHeaders(modifier), respHeaders({ add: [{ name: "X-R", value: "r" }] })],
      backendRefs: [{ ...v1, filters: [respHeaders({ remove: ["X-Q"] })] }],
    },
    { filters: [mirror({ backendRef: { name: "infra-backend-v2", port: 8080 } })], ...toV1 },
    { filters: [rewrite({ hostname: "x.test" })], ...toV1 },
    { filters: [{ type: "ExtensionRef" }], ...toV1 },
  ],
};

/** Every route's record (as stored: JSON) or, when it has none, the conditions and messages of its status. */
function translatedRecords(): string {
  const result = translate({
    httpRoutes: Object.entries(RULES).map(([name, rules]) =>
      httpRoute(name, { hostnames: [`${name}.test`], rules }),
    ),
    grpcRoutes: Object.entries(GRPC_RULES).map(([name, rules]) => grpcRoute(name, rules)),
  });
  const lines: string[] = [];
  const statuses = [...result.statuses.httpRoutes, ...(result.statuses.grpcRoutes ?? [])];
  for (const [key, parents] of statuses.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    lines.push(`## ${key}`);
    for (const item of parents[0]?.conditions ?? []) {
      lines.push(`${item.type}=${item.status}/${item.reason}: ${item.message}`);
    }
    const name = key.split("/")[1];
    const record = result.routes.find((route) => route.id.endsWith(`/${name}`));
    if (record) lines.push(JSON.stringify(record));
  }
  lines.push("## problems", ...result.problems.map((problem) => JSON.stringify(problem)));
  return `${lines.join("\n")}\n`;
}

describe("the records filters translate to", () => {
  it("are byte for byte those written before the filters were one module per kind", async () => {
    await expect(translatedRecords()).toMatchFileSnapshot("./filter-records.golden.txt");
  });
});

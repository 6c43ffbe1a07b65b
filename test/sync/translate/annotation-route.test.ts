import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute } from "../../../functions/core/routes/route-table.js";
import { RouteRecordSchema } from "../../../store/routes.js";
import { annotationRoute } from "../../../sync/translate/annotation-route.js";
import { exposeService } from "../../../sync/translate/exposure.js";
import { service } from "./fixtures.js";

/** The record exposeService publishes for Service shop/web (or `name`) with these annotations. */
function exposed(annotations: Record<string, string>, name = "web") {
  const result = exposeService(
    "east",
    { ...service({ annotations }), metadata: { name, namespace: "shop", annotations } },
    [],
  );
  if (result.kind !== "exposed") throw new Error(`not exposed: ${JSON.stringify(result)}`);
  return result.record;
}

describe("annotation exposure as a route record", () => {
  it("carries hosts, path prefix and port into one PathPrefix rule with one-label wildcards", () => {
    const record = annotationRoute(
      exposed({ "edgeslice.io/hosts": "Shop.example, *.shop.example", "edgeslice.io/path-prefix": "/api/" }),
      1234,
    );
    expect(record).toEqual({
      v: 2,
      id: "annotation:shop/web",
      source: "annotation",
      createdAt: 1234,
      hostnames: ["shop.example", "*.shop.example"],
      wildcard: "one-label",
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/api" }, headers: [] }],
          filters: {},
          backends: [{ service: "shop/web", port: 80, weight: 1 }],
        },
      ],
    });
    expect(v.safeParse(RouteRecordSchema, record).success).toBe(true);
  });

  it.each([
    ["the exact host", "shop.example", "/api/x", true],
    ["a host one label under the wildcard", "a.shop.example", "/api", true],
    ["a host two labels under the wildcard", "a.b.shop.example", "/api", false],
    ["a path outside the prefix", "shop.example", "/apix", false],
  ])("routes %s as today's route index does (%s%s → %s)", (_case, host, path, routed) => {
    const record = annotationRoute(
      exposed({ "edgeslice.io/hosts": "shop.example,*.shop.example", "edgeslice.io/path-prefix": "/api" }),
    );
    const found = matchRoute(buildRouteTable([{ route: record }]), host, {
      path,
      method: "GET",
      headers: new Headers(),
    });
    expect(found !== undefined).toBe(routed);
  });

  it("keeps today's tie rule by default: of two Services on the same host and prefix, the lexically first wins", () => {
    const hosts = { "edgeslice.io/hosts": "shop.example" };
    const routes = [annotationRoute(exposed(hosts, "zeta")), annotationRoute(exposed(hosts, "alpha"))];
    const found = matchRoute(buildRouteTable(routes.map((route) => ({ route }))), "shop.example", {
      path: "/",
      method: "GET",
      headers: new Headers(),
    });
    expect(found?.route.id).toBe("annotation:shop/alpha");
  });
});

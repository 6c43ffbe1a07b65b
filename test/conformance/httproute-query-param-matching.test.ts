import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteQueryParamMatching: Exact query-parameter matches alone, with path and header
 * matches (ANDed within a match, ORed across matches), and their place in precedence (after headers).
 */
let world: Conformance;
const GATEWAY_ADDRESS = "127.0.0.1:80";
const query = (...pairs: [string, string][]) => ({
  queryParams: pairs.map(([name, value]) => ({ name, value })),
});
const header = (value: string) => ({ headers: [{ name: "version", value }] });
const rule = (service: string, ...matches: Record<string, unknown>[]) => ({
  matches,
  backendRefs: [backend(service)],
});

beforeAll(async () => {
  world = await startConformance({
    label: "query",
    objects: [
      httpRouteObject("query-param-matching", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          rule("infra-backend-v1", query(["animal", "whale"])),
          rule("infra-backend-v2", query(["animal", "dolphin"])),
          rule(
            "infra-backend-v3",
            query(["animal", "dolphin"], ["color", "blue"]),
            query(["ANIMAL", "Whale"]),
          ),
          rule("infra-backend-v1", { ...prefixMatch("/path1"), ...query(["animal", "whale"]) }),
          rule("infra-backend-v2", { ...header("one"), ...query(["animal", "whale"]) }),
          rule("infra-backend-v3", {
            ...prefixMatch("/path2"),
            ...header("two"),
            ...query(["animal", "whale"]),
          }),
          rule(
            "infra-backend-v1",
            { ...prefixMatch("/path3"), ...query(["animal", "shark"]) },
            { ...prefixMatch("/path4"), ...header("three"), ...query(["animal", "kraken"]) },
          ),
          rule("infra-backend-v1", prefixMatch("/path5")),
          rule("infra-backend-v2", query(["animal", "hydra"])),
          rule("infra-backend-v3", header("four")),
        ],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: "/?animal=whale" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteQueryParamMatching", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "query-param-matching", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it.each<[string, Record<string, string>, string]>([
    ["/?animal=whale", {}, "infra-backend-v1"],
    ["/?animal=dolphin", {}, "infra-backend-v2"],
    ["/?animal=dolphin&color=blue", {}, "infra-backend-v3"],
    ["/?ANIMAL=Whale", {}, "infra-backend-v3"],
    ["/?animal=whale&otherparam=irrelevant", {}, "infra-backend-v1"],
    ["/?animal=dolphin&color=yellow", {}, "infra-backend-v2"],
    ["/?color=blue", {}, "404"],
    ["/?animal=dog", {}, "404"],
    ["/?animal=whaledolphin", {}, "404"],
    ["/", {}, "404"],
    ["/path1?animal=whale", {}, "infra-backend-v1"],
    ["/?animal=whale", { version: "one" }, "infra-backend-v2"],
    ["/path2?animal=whale", { version: "two" }, "infra-backend-v3"],
    ["/path3?animal=shark", {}, "infra-backend-v1"],
    ["/path4?animal=kraken", { version: "three" }, "infra-backend-v1"],
    ["/?animal=shark", {}, "404"],
    ["/path4?animal=kraken", {}, "404"],
    ["/path5?animal=hydra", {}, "infra-backend-v1"],
    ["/?animal=hydra", { version: "four" }, "infra-backend-v3"],
  ])("routes %s (headers %j) to %s", async (path, headers, expected) => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path, headers });
    if (expected === "404") {
      expect(answer.status).toBe(404);
      expect(answer.echo).toBeUndefined();
    } else {
      expect(answer.status).toBe(200);
      expect(answer.echo?.backend).toBe(`${INFRA}/${expected}`);
      expect(answer.echo?.path).toBe(path);
    }
  });
});

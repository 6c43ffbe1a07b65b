import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRequestMultipleMirrors: a rule with two RequestMirror filters answers from its backend
 * and sends one copy to each mirror, alone and next to a RequestHeaderModifier (whose headers the backend gets).
 */
let world: Conformance;
const ROUTE = "request-multiple-mirrors";
const v = (name: string) => `${INFRA}/${name}`;
const mirror = (service: string) => ({
  type: "RequestMirror",
  requestMirror: { backendRef: backend(service) },
});
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

beforeAll(async () => {
  world = await startConformance({
    label: "multi-mirror",
    objects: [
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch("/multi-mirror")],
            filters: [mirror("infra-backend-v2"), mirror("infra-backend-v3")],
            backendRefs: [backend("infra-backend-v1")],
          },
          {
            matches: [prefixMatch("/multi-mirror-and-modify-request-headers")],
            filters: [headerModifier, mirror("infra-backend-v2"), mirror("infra-backend-v3")],
            backendRefs: [backend("infra-backend-v1")],
          },
        ],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: "/multi-mirror" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

/** Waits until `backend` has received `count` requests (copies arrive after the answer). */
async function untilHits(backend: string, count: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  while (world.hits(backend) < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return world.hits(backend);
}

describe("conformance HTTPRouteRequestMultipleMirrors", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, ROUTE, (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it.each([
    ["/multi-mirror", {}, {}],
    [
      "/multi-mirror-and-modify-request-headers",
      { "X-Header-Remove": "remove-val", "X-Header-Add-Append": "append-val-1" },
      {
        "x-header-add": "header-val-1",
        "x-header-add-append": "append-val-1, header-val-2",
        "x-header-set": "set-overwrites-values",
        "x-header-remove": undefined,
      },
    ],
  ])("answers %s from infra-backend-v1 and sends one copy to each mirror", async (path, headers, seen) => {
    const before = [world.hits(v("infra-backend-v2")), world.hits(v("infra-backend-v3"))] as const;
    const answer = await world.send({ host: GATEWAY_ADDRESS, path, headers });
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(v("infra-backend-v1"));
    expect(answer.echo?.path).toBe(path);
    for (const [header, value] of Object.entries(seen))
      expect(answer.echo?.headers[header], header).toBe(value);
    expect(await untilHits(v("infra-backend-v2"), before[0] + 1)).toBe(before[0] + 1);
    expect(await untilHits(v("infra-backend-v3"), before[1] + 1)).toBe(before[1] + 1);
  });
});

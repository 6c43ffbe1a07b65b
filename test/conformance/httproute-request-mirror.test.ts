import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRequestMirror: the request is answered by its backend, and a copy reaches the mirror's
 * Service (the copy's answer is dropped). HTTPRouteRequestMultipleMirrors has its own file.
 */
let world: Conformance;
const mirror = (service: string) => ({
  type: "RequestMirror",
  requestMirror: { backendRef: backend(service) },
});
const v = (name: string) => `${INFRA}/${name}`;

beforeAll(async () => {
  world = await startConformance({
    label: "mirror",
    objects: [
      httpRouteObject("request-mirror", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch("/mirror")],
            filters: [mirror("infra-backend-v2")],
            backendRefs: [backend("infra-backend-v1")],
          },
        ],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: "/mirror" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

/** Waits until `backend` has received `count` requests (copies arrive after the answer). */
async function untilHits(backend: string, count: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  while (world.hits(backend) < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return world.hits(backend);
}

describe("conformance HTTPRouteRequestMirror", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "request-mirror", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("answers from the backend and sends a copy to the mirror", async () => {
    const before = world.hits(v("infra-backend-v2"));
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/mirror" });
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(v("infra-backend-v1"));
    expect(await untilHits(v("infra-backend-v2"), before + 1)).toBe(before + 1);
  });

  it("copies through the web path too (HEAD on Node; every request on Workers)", async () => {
    const before = world.hits(v("infra-backend-v2"));
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/mirror", method: "HEAD" });
    expect(answer.status).toBe(200);
    expect(await untilHits(v("infra-backend-v2"), before + 1)).toBe(before + 1);
  });
});

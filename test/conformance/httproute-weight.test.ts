import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteWeight: backends weighted 70, 30 and 0. As the suite does, 500 requests (10 at a time)
 * must split within 5 points of 70 % and 30 %, the weight-0 backend getting none; a draw is random, so like
 * the suite a round may be repeated (up to 10 rounds; one misses with a chance near 1.4 %).
 */
let world: Conformance;
const ROUTE = "weighted-backends";
const EXPECTED = { "infra-backend-v1": 0.7, "infra-backend-v2": 0.3, "infra-backend-v3": 0 } as const;
const TOTAL = 500;
const TOLERANCE = 0.05;

beforeAll(async () => {
  world = await startConformance({
    label: "weight",
    objects: [
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            backendRefs: [
              backend("infra-backend-v1", { weight: 70 }),
              backend("infra-backend-v2", { weight: 30 }),
              backend("infra-backend-v3", { weight: 0 }),
            ],
          },
        ],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: "/" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

async function distribution(): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  let sent = 0;
  const worker = async () => {
    while (sent < TOTAL) {
      sent += 1;
      const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/" });
      expect(answer.status).toBe(200);
      const name = answer.echo?.backend ?? "none";
      seen.set(name, (seen.get(name) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  return seen;
}

function misses(seen: ReadonlyMap<string, number>): string[] {
  return Object.entries(EXPECTED).flatMap(([service, share]) => {
    const got = (seen.get(`${INFRA}/${service}`) ?? 0) / TOTAL;
    return Math.abs(got - share) > TOLERANCE ? [`${service} got ${got}, wants ${share}`] : [];
  });
}

describe("conformance HTTPRouteWeight", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, ROUTE, (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("splits requests 70/30 between v1 and v2 and never sends to the weight-0 v3", async () => {
    let last: string[] = [];
    for (let round = 0; round < 10; round += 1) {
      const seen = await distribution();
      expect(seen.get(`${INFRA}/infra-backend-v3`)).toBeUndefined();
      expect([...seen.keys()].sort()).toEqual([`${INFRA}/infra-backend-v1`, `${INFRA}/infra-backend-v2`]);
      last = misses(seen);
      if (last.length === 0) break;
    }
    expect(last).toEqual([]);
  }, 60_000);
});

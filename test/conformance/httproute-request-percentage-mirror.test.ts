import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binomialTail } from "../functions/statistics.js";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRequestPercentageMirror: a mirror by percent and one by fraction copy about that
 * share of the requests, and every request is answered by its own backend.
 */
let world: Conformance;
const v = (name: string) => `${INFRA}/${name}`;

beforeAll(async () => {
  world = await startConformance({
    label: "mirror-percent",
    objects: [
      httpRouteObject("request-percentage-mirror", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch("/percent-mirror")],
            filters: [
              {
                type: "RequestMirror",
                requestMirror: { backendRef: backend("infra-backend-v2"), percent: 20 },
              },
            ],
            backendRefs: [backend("infra-backend-v1")],
          },
          {
            matches: [prefixMatch("/percent-mirror-fraction")],
            filters: [
              {
                type: "RequestMirror",
                requestMirror: {
                  backendRef: backend("infra-backend-v3"),
                  fraction: { numerator: 1, denominator: 2 },
                },
              },
            ],
            backendRefs: [backend("infra-backend-v1")],
          },
        ],
      }),
    ],
  });
  await world.until(
    { host: GATEWAY_ADDRESS, path: "/percent-mirror" },
    (answer) => answer.echo !== undefined,
  );
}, 30_000);

afterAll(() => world?.stop());

/**
 * Sends `n` requests to `path`, each answered by its own backend, then waits for `mirror` to have received at
 * least `atLeast` copies (copies trail their answers) and gives the copies counted by then.
 */
async function copiesOf(path: string, mirror: string, n: number, atLeast: number): Promise<number> {
  const before = world.hits(mirror);
  for (let batch = 0; batch < n / 20; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => world.send({ host: GATEWAY_ADDRESS, path })),
    );
    for (const answer of answers) expect(answer.echo?.backend).toBe(v("infra-backend-v1"));
  }
  const deadline = Date.now() + 5_000;
  while (world.hits(mirror) - before < atLeast && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return world.hits(mirror) - before;
}

describe("conformance HTTPRouteRequestPercentageMirror", () => {
  it("copies about 20 percent of the requests for percent: 20", async () => {
    // Copies ~ Binomial(400, 0.2): mean 80, sd 8; off by 45 or more has probability < 1e-6.
    expect(binomialTail(400, 0.2, 45)).toBeLessThan(1e-6);
    // Copies only add up: at least the lower bound arrives, and never more than the upper one is sent.
    const copies = await copiesOf("/percent-mirror", v("infra-backend-v2"), 400, 80 - 44);
    expect(copies).toBeGreaterThanOrEqual(80 - 44);
    expect(copies).toBeLessThanOrEqual(80 + 44);
  });

  it("copies about half of the requests for fraction 1/2", async () => {
    expect(binomialTail(200, 0.5, 40)).toBeLessThan(1e-6);
    const copies = await copiesOf("/percent-mirror-fraction", v("infra-backend-v3"), 200, 100 - 39);
    expect(copies).toBeGreaterThanOrEqual(100 - 39);
    expect(copies).toBeLessThanOrEqual(100 + 39);
  });
});

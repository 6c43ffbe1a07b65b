import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { expectReadableBySuiteClient, GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRetry (experimental channel, HTTPRouteRule.retry): infra-backend-v3 (one pod, as in the
 * suite) fails the first `succeedAfter` requests of a `uuid` with `responseCode`; a rule retrying 500 up to 3
 * times, and one retrying 500/502/503/504 up to twice. Within the attempts the backend's success is answered;
 * past them, or for a code the rule does not retry, the backend's own failure. Each request names a fresh
 * uuid, as the suite's probes do. Beyond the suite: the backend saw exactly 1 + the retries made.
 */
const V3 = `${INFRA}/infra-backend-v3`;
const ATTEMPTS_3 = "/retry/code-500-attempts-3";
const ALL_ATTEMPTS_2 = "/retry/code-all-attempts-2";
let world: Conformance;

beforeAll(async () => {
  world = await startConformance({
    label: "retry",
    objects: [
      httpRouteObject("retries", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch(ATTEMPTS_3)],
            retry: { codes: [500], attempts: 3 },
            backendRefs: [backend("infra-backend-v3")],
          },
          {
            matches: [prefixMatch(ALL_ATTEMPTS_2)],
            retry: { codes: [500, 502, 503, 504], attempts: 2 },
            backendRefs: [backend("infra-backend-v3")],
          },
        ],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: ATTEMPTS_3 }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

const retryPath = (path: string, responseCode: number, succeedAfter: number) =>
  `${path}?${new URLSearchParams({ responseCode: String(responseCode), succeedAfter: String(succeedAfter), uuid: randomUUID() })}`;

describe("conformance HTTPRouteRetry", () => {
  it("accepts HTTPRoute retries with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "retries", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it.each([
    [ATTEMPTS_3, 500, 2, 200, 3],
    [ATTEMPTS_3, 500, 4, 500, 4],
    [ATTEMPTS_3, 503, 2, 503, 1],
    [ALL_ATTEMPTS_2, 500, 1, 200, 2],
    [ALL_ATTEMPTS_2, 500, 3, 500, 3],
    [ALL_ATTEMPTS_2, 502, 1, 200, 2],
    [ALL_ATTEMPTS_2, 502, 3, 502, 3],
    [ALL_ATTEMPTS_2, 503, 1, 200, 2],
    [ALL_ATTEMPTS_2, 503, 3, 503, 3],
    [ALL_ATTEMPTS_2, 504, 1, 200, 2],
    [ALL_ATTEMPTS_2, 504, 3, 504, 3],
  ])(
    "%s failing %s %s times: answers %s after %s requests to the backend",
    async (path, code, fails, status, sent) => {
      const before = world.hits(V3);
      const answer = await world.send({ host: GATEWAY_ADDRESS, path: retryPath(path, code, fails) });
      expectReadableBySuiteClient(answer);
      expect(answer.status).toBe(status);
      if (status === 200) expect(answer.echo?.backend).toBe(V3);
      else expect(answer.headers["x-request-id"]).toEqual(expect.any(String));
      expect(world.hits(V3) - before).toBe(sent);
    },
  );
});

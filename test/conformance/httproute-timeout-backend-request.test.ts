import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteTimeoutBackendRequest: timeouts.backendRequest 500ms bounds each attempt, so a backend
 * that answers after 1 s is answered 504 by the router; "0s" leaves the router's own limit (5 s here).
 */
let world: Conformance;
const GATEWAY_ADDRESS = "127.0.0.1:80";

beforeAll(async () => {
  world = await startConformance({
    label: "backend-timeout",
    objects: [
      httpRouteObject("backend-request-timeout", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch("/backend-timeout")],
            backendRefs: [backend("infra-backend-v1")],
            timeouts: { backendRequest: "500ms" },
          },
          {
            matches: [prefixMatch("/disabled-backend-timeout")],
            backendRefs: [backend("infra-backend-v1")],
            timeouts: { backendRequest: "0s" },
          },
        ],
      }),
    ],
  });
  await world.until(
    { host: GATEWAY_ADDRESS, path: "/backend-timeout" },
    (answer) => answer.echo !== undefined,
  );
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteTimeoutBackendRequest", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "backend-request-timeout", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("answers a prompt backend's 200 through the route", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/backend-timeout" });
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
  });

  it("answers 504 when the backend takes 1 s under a 500 ms backendRequest timeout", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/backend-timeout?delay=1s" });
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "upstream_timeout" });
  });

  it("keeps the router's own limit for a 0s timeout: the 1 s answer comes through", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/disabled-backend-timeout?delay=1s" });
    expect(answer.status).toBe(200);
    expect(answer.echo?.path).toBe("/disabled-backend-timeout?delay=1s");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";

/**
 * Conformance HTTPRouteTimeoutRequest: timeouts.request 500ms bounds the whole request, so a backend
 * that answers after 1 s is answered 504 by the router; "0s" leaves the router's own limit (5 s here).
 */
let world: Conformance;
const GATEWAY_ADDRESS = "127.0.0.1:80";

beforeAll(async () => {
  world = await startConformance({
    label: "request-timeout",
    objects: [
      httpRouteObject("request-timeout", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [prefixMatch("/request-timeout")],
            backendRefs: [backend("infra-backend-v1")],
            timeouts: { request: "500ms" },
          },
          {
            matches: [prefixMatch("/disable-request-timeout")],
            backendRefs: [backend("infra-backend-v1")],
            timeouts: { request: "0s" },
          },
        ],
      }),
    ],
  });
  await world.until(
    { host: GATEWAY_ADDRESS, path: "/request-timeout" },
    (answer) => answer.echo !== undefined,
  );
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteTimeoutRequest", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, "request-timeout", (found) =>
      acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("answers a prompt backend's 200 through the route", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/request-timeout" });
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${INFRA}/infra-backend-v1`);
  });

  it("answers 504 when the backend takes 1 s under a 500 ms request timeout", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/request-timeout?delay=1s" });
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "upstream_timeout" });
  });

  it("answers 504 on the web path too (HEAD on Node; every request on Workers)", async () => {
    const answer = await world.send({
      host: GATEWAY_ADDRESS,
      path: "/request-timeout?delay=1s",
      method: "HEAD",
    });
    expect(answer.status).toBe(504);
  });

  it("keeps the router's own limit for a 0s timeout: the 1 s answer comes through", async () => {
    const answer = await world.send({ host: GATEWAY_ADDRESS, path: "/disable-request-timeout?delay=1s" });
    expect(answer.status).toBe(200);
    expect(answer.echo?.path).toBe("/disable-request-timeout?delay=1s");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject } from "./support/conformance-base.js";
import {
  httpsBaseObjects,
  startTlsConformance,
  type TlsConformance,
  untilTrue,
} from "./support/tls-fixture.js";

/**
 * Conformance HTTPRouteHTTPSListener: HTTPRoutes attached to the base Gateway's HTTPS listeners, reached over
 * TLS with the SNI and Host the official test sends (curl against the router's HTTPS listener).
 */
describe("HTTPRouteHTTPSListener", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "https-listener",
      objects: [
        ...httpsBaseObjects(),
        httpRouteObject("httproute-https-test", {
          parentRefs: [{ name: "same-namespace-with-https-listener" }],
          hostnames: ["example.org"],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
        httpRouteObject("httproute-https-test-no-hostname", {
          parentRefs: [{ name: "same-namespace-with-https-listener", sectionName: "https-with-hostname" }],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("programs both HTTPS listeners with their certificate resolved", async () => {
    for (const listener of ["https", "https-with-hostname"]) {
      const conditions = await untilTrue(
        () => world.listenerConditions("same-namespace-with-https-listener", listener),
        (items) => items.some((item) => item.type === "Programmed" && item.status === "True"),
      );
      expect(conditions).toContainEqual(expect.objectContaining({ type: "ResolvedRefs", status: "True" }));
      expect(conditions).toContainEqual(expect.objectContaining({ type: "Programmed", status: "True" }));
    }
  });

  it("sends a simple HTTPS request for example.org to infra-backend-v1", async () => {
    const answer = await untilTrue(
      () => world.curl({ sni: "example.org" }),
      (item) => item.status === 200,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toContain("gateway-conformance-infra/infra-backend-v1");
  });

  it("sends an HTTPS request to the listener with hostname second-example.org to infra-backend-v1", async () => {
    const answer = await untilTrue(
      () => world.curl({ sni: "second-example.org" }),
      (item) => item.status === 200,
    );
    expect(answer.body).toContain("gateway-conformance-infra/infra-backend-v1");
  });

  it("answers an unknown hostname 404, over the certificate of the listener without hostname", async () => {
    await untilTrue(
      () => world.curl({ sni: "example.org" }),
      (item) => item.status === 200,
    );
    const answer = await world.curl({ sni: "unknown-example.org" });
    expect(answer.status).toBe(404);
  });

  it("answers 421 to a Host of the hostname listener sent over the SNI of the listener without hostname", async () => {
    await untilTrue(
      () => world.curl({ sni: "second-example.org" }),
      (item) => item.status === 200,
    );
    // The SNI chose the listener without hostname, which does not serve second-example.org: the client must use
    // a connection of its own (RFC 9110 §15.5.20; HTTPRouteHTTPSListenerDetectMisdirectedRequests).
    const answer = await world.curl({ sni: "unknown-example.org", host: "second-example.org" });
    expect(answer.status).toBe(421);
  });
});

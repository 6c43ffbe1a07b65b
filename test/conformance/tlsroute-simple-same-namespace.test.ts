import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import { readListeners } from "./support/gateway-listeners.js";
import {
  passthroughListener,
  startTlsRouteConformance,
  type TlsRouteConformance,
  tlsRouteObject,
} from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteSimpleSameNamespace: a TLSRoute for abc.example.com on the Passthrough listener of
 * `gateway-tlsroute` (`*.example.com`, port 443) is accepted, and a TLS connection with that SNI reaches
 * tcp-backend, which ends the TLS itself: the client sees the backend's certificate and the backend the SNI.
 */
describe("conformance TLSRouteSimpleSameNamespace", () => {
  let world: TlsRouteConformance;
  beforeAll(async () => {
    world = await startTlsRouteConformance({
      label: "tlsroute-simple",
      objects: [
        gatewayObject("gateway-tlsroute", [passthroughListener("https", { hostname: "*.example.com" })]),
        tlsRouteObject("gateway-conformance-infra-test", {
          parentRefs: [{ name: "gateway-tlsroute", namespace: "gateway-conformance-infra" }],
          hostnames: ["abc.example.com"],
          rules: [{ backendRefs: [{ name: "tcp-backend", port: 8443 }] }],
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("accepts the route with its refs resolved, and counts it on the Gateway's programmed listener", async () => {
    const parents = await world.acceptedRoute("gateway-conformance-infra-test");
    expect(parents).toEqual([
      {
        parent: "gateway-tlsroute",
        conditions: expect.arrayContaining(["Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"]),
      },
    ]);
    const [listener] = readListeners(world.cluster.kube, "gateway-tlsroute");
    expect(listener?.attachedRoutes).toBe(1);
    expect(listener?.supportedKinds).toEqual(["gateway.networking.k8s.io/TLSRoute"]);
    expect(listener?.conditions).toContain("Programmed=True/Programmed");
  });

  it("passes a TLS connection for abc.example.com through to tcp-backend, which ends its TLS", async () => {
    const dial = await world.dialUntil("abc.example.com", (outcome) => outcome.greeting !== undefined);
    expect(dial).toEqual({
      greeting: "tcp-backend sni=abc.example.com",
      names: "DNS:abc.example.com, DNS:*.example.com",
      echo: "ping",
    });
  });
});

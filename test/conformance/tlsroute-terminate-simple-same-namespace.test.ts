import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import { readListeners } from "./support/gateway-listeners.js";
import {
  startTlsRouteConformance,
  type TlsRouteConformance,
  terminateListener,
  tlsRouteObject,
} from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteTerminateSimpleSameNamespace: a TLSRoute for tls.example.com on the Terminate listener
 * of `gateway-tlsroute-terminate` (port 8443) is accepted; the router ends the client's TLS with the
 * listener's certificate (the suite's tls-terminate-checks-certificate, trusted through its CA) and relays
 * the decrypted bytes to tcp-backend's cleartext port 3000, both ways (the suite round-trips MQTT over it).
 */
describe("conformance TLSRouteTerminateSimpleSameNamespace", () => {
  let world: TlsRouteConformance;
  beforeAll(async () => {
    world = await startTlsRouteConformance({
      label: "tlsroute-terminate",
      env: { HTTPS_LISTENER_PORTS: "8443=0" },
      objects: [
        gatewayObject("gateway-tlsroute-terminate", [terminateListener("tlsterminate", 8443)]),
        tlsRouteObject("tlsroute-terminated-test", {
          parentRefs: [{ name: "gateway-tlsroute-terminate", namespace: "gateway-conformance-infra" }],
          hostnames: ["tls.example.com"],
          rules: [{ backendRefs: [{ name: "tcp-backend", port: 3000 }] }],
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("accepts the route and counts it on the Gateway's programmed Terminate listener", async () => {
    const parents = await world.acceptedRoute("tlsroute-terminated-test");
    expect(parents).toEqual([
      {
        parent: "gateway-tlsroute-terminate",
        conditions: expect.arrayContaining(["Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"]),
      },
    ]);
    const [listener] = readListeners(world.cluster.kube, "gateway-tlsroute-terminate");
    expect(listener?.attachedRoutes).toBe(1);
    expect(listener?.supportedKinds).toEqual(["gateway.networking.k8s.io/TLSRoute"]);
    expect(listener?.conditions).toEqual(
      expect.arrayContaining(["Accepted=True/Accepted", "Programmed=True/Programmed"]),
    );
  });

  it("ends TLS with the listener's certificate and relays the cleartext to tcp-backend both ways", async () => {
    const dial = await world.dialUntil(
      "tls.example.com",
      (outcome) => outcome.greeting !== undefined,
      undefined,
      8443,
    );
    expect(dial).toEqual({ greeting: "tcp-backend sni=-", names: "DNS:tls.example.com", echo: "ping" });
  });

  it("closes a connection for a name no TLSRoute of the listener claims", async () => {
    const dial = await world.dial("other.example.com", undefined, 8443);
    expect(dial.greeting).toBeUndefined();
  });
});

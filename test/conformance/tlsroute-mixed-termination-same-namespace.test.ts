import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";
import {
  passthroughListener,
  startTlsRouteConformance,
  type TlsRouteConformance,
  terminateListener,
  tlsRouteObject,
} from "./support/tls-route-fixture.js";

const GATEWAY = "gateway-tlsroute-mixed-termination";
const PARENT = { name: GATEWAY, namespace: "gateway-conformance-infra" };

/**
 * Conformance TLSRouteMixedTerminationSameNamespace: a Terminate listener (tls.example.com) and a Passthrough
 * listener (abc.example.com) share port 8883, each with one TLSRoute. The router tells them apart by the
 * ClientHello's server name: tls.example.com is decrypted with the listener's certificate and reaches
 * tcp-backend's cleartext port without SNI; abc.example.com goes through untouched to tcp-backend's TLS port,
 * which sees the SNI and shows its own certificate.
 */
describe("conformance TLSRouteMixedTerminationSameNamespace", () => {
  let world: TlsRouteConformance;
  beforeAll(async () => {
    world = await startTlsRouteConformance({
      label: "tlsroute-mixed",
      env: { HTTPS_LISTENER_PORTS: "8883=0" },
      objects: [
        gatewayObject(GATEWAY, [
          terminateListener("tls-terminate", 8883),
          passthroughListener("tls-passthrough", { port: 8883, hostname: "abc.example.com" }),
        ]),
        tlsRouteObject("gateway-conformance-mixed-passthroughroute", {
          parentRefs: [PARENT],
          hostnames: ["abc.example.com"],
          rules: [{ backendRefs: [{ name: "tcp-backend", port: 8443 }] }],
        }),
        tlsRouteObject("gateway-conformance-mixed-terminateroute", {
          parentRefs: [PARENT],
          hostnames: ["tls.example.com"],
          rules: [{ backendRefs: [{ name: "tcp-backend", port: 3000 }] }],
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("accepts both routes, and both listeners of the port with one route each", async () => {
    await world.acceptedRoute("gateway-conformance-mixed-passthroughroute");
    await world.acceptedRoute("gateway-conformance-mixed-terminateroute");
    const expected: ExpectedListener[] = ["tls-terminate", "tls-passthrough"].map((name) => ({
      name,
      supportedKinds: ["gateway.networking.k8s.io/TLSRoute"],
      conditions: ["Accepted=True/Accepted", "Conflicted=False/NoConflicts"],
      attachedRoutes: 1,
    }));
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });

  it("ends TLS for tls.example.com and relays the cleartext to tcp-backend without SNI", async () => {
    const dial = await world.dialUntil(
      "tls.example.com",
      (outcome) => outcome.greeting !== undefined,
      undefined,
      8883,
    );
    expect(dial).toEqual({ greeting: "tcp-backend sni=-", names: "DNS:tls.example.com", echo: "ping" });
  });

  it("passes abc.example.com through to tcp-backend, which ends the TLS and sees the SNI", async () => {
    const dial = await world.dialUntil(
      "abc.example.com",
      (outcome) => outcome.greeting !== undefined,
      undefined,
      8883,
    );
    expect(dial).toEqual({
      greeting: "tcp-backend sni=abc.example.com",
      names: "DNS:abc.example.com, DNS:*.example.com",
      echo: "ping",
    });
  });
});

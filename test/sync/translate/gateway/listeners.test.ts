import { describe, expect, it } from "vitest";
import { gateway, gatewayClass, listener, listenerSummary, translate } from "./fixtures.js";

const summaryOf = (conditions: readonly { type: string; status: string; reason: string }[] = []) =>
  conditions.map((item) => `${item.type}=${item.status}/${item.reason}`);

describe("GatewayClass", () => {
  it("accepts a class with our controllerName and ignores the others", () => {
    const result = translate({
      gatewayClasses: [gatewayClass(), gatewayClass("nginx", "k8s.io/ingress-nginx")],
    });
    expect([...result.statuses.gatewayClasses.keys()]).toEqual(["edgeslice"]);
    expect(result.statuses.gatewayClasses.get("edgeslice")?.conditions).toEqual([
      {
        type: "Accepted",
        status: "True",
        reason: "Accepted",
        message: "GatewayClass accepted",
        observedGeneration: 1,
      },
    ]);
  });

  it("rejects a class with parametersRef (InvalidParameters), and so its Gateways", () => {
    const result = translate({
      gatewayClasses: [
        gatewayClass("edgeslice", undefined, { parametersRef: { group: "", kind: "ConfigMap", name: "x" } }),
      ],
    });
    expect(summaryOf(result.statuses.gatewayClasses.get("edgeslice")?.conditions)).toEqual([
      "Accepted=False/InvalidParameters",
    ]);
    expect(summaryOf(result.statuses.gateways.get("infra/gw")?.conditions)).toEqual([
      "Accepted=False/Invalid",
      "Programmed=False/Invalid",
    ]);
  });

  it("leaves Gateways of other classes, and of classes that do not exist, alone", () => {
    const result = translate({
      gateways: [
        gateway({ name: "theirs", className: "nginx" }),
        gateway({ name: "ghost", className: "missing" }),
      ],
    });
    expect(result.statuses.gateways.size).toBe(0);
  });
});

describe("Gateway and listener conditions", () => {
  it("accepts and programs a Gateway whose listeners are all valid, with observedGeneration", () => {
    const result = translate({});
    const status = result.statuses.gateways.get("infra/gw");
    expect(summaryOf(status?.conditions)).toEqual(["Accepted=True/Accepted", "Programmed=True/Programmed"]);
    expect(status?.conditions.every((item) => item.observedGeneration === 2)).toBe(true);
    // GRPCRoute is allowed on HTTP and HTTPS listeners by default, as HTTPRoute is.
    expect(status?.listeners[0]?.supportedKinds).toEqual([
      { group: "gateway.networking.k8s.io", kind: "HTTPRoute" },
      { group: "gateway.networking.k8s.io", kind: "GRPCRoute" },
    ]);
    expect(listenerSummary(result)).toEqual([
      "http: 0 Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
    ]);
  });

  it("accepts HTTPS listeners: TLS ends before the router", () => {
    const gw = gateway({
      listeners: [
        listener("https", { port: 443, protocol: "HTTPS", tls: { certificateRefs: [{ name: "cert" }] } }),
      ],
    });
    expect(listenerSummary(translate({ gateways: [gw] }))[0]).toContain("Accepted=True/Accepted");
  });

  it.each([
    [
      "an unsupported protocol (conformance GatewayInvalidListenersUnsupportedProtocol)",
      [listener("tcp", { protocol: "TCP", port: 9000 }), listener("http")],
      ["Accepted=True/ListenersNotValid", "Programmed=True/Programmed"],
      [
        "tcp: 0 Accepted=False/UnsupportedProtocol Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
      ],
    ],
    [
      "only unsupported protocols",
      [listener("udp", { protocol: "UDP", port: 53 })],
      ["Accepted=False/ListenersNotValid", "Programmed=False/Invalid"],
      [
        "udp: 0 Accepted=False/UnsupportedProtocol Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
      ],
    ],
    [
      "two protocols on one port",
      [listener("http"), listener("https", { protocol: "HTTPS", hostname: "a.example.com" })],
      ["Accepted=False/ListenersNotValid", "Programmed=False/Invalid"],
      [
        "http: 0 Accepted=False/ProtocolConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=True/ProtocolConflict",
      ],
    ],
    [
      "an unknown allowedRoutes.namespaces.from",
      [listener("http", { allowedRoutes: { namespaces: { from: "Nearby" } } })],
      ["Accepted=False/ListenersNotValid", "Programmed=False/Invalid"],
      [
        "http: 0 Accepted=False/UnsupportedValue Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
      ],
    ],
    [
      "a selector with an unknown operator",
      [
        listener("http", {
          allowedRoutes: {
            namespaces: {
              from: "Selector",
              selector: { matchExpressions: [{ key: "a", operator: "Like" }] },
            },
          },
        }),
      ],
      ["Accepted=False/ListenersNotValid", "Programmed=False/Invalid"],
      [
        "http: 0 Accepted=False/UnsupportedValue Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
      ],
    ],
  ])("reports %s", (_case, listeners, gatewayConditions, firstListener) => {
    const result = translate({ gateways: [gateway({ listeners })] });
    expect(summaryOf(result.statuses.gateways.get("infra/gw")?.conditions)).toEqual(gatewayConditions);
    expect(listenerSummary(result).slice(0, 1)).toEqual(firstListener);
  });

  it.each([
    [
      "only invalid route kinds: no supported kinds (conformance GatewayInvalidRouteKind)",
      [{ kind: "FooRoute" }],
      [],
      "Programmed=False/Invalid",
    ],
    [
      "valid and invalid route kinds: HTTPRoute stays supported",
      [{ kind: "FooRoute" }, { group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
      [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
      "Programmed=True/Programmed",
    ],
  ])("reports ResolvedRefs=False/InvalidRouteKinds for %s", (_case, kinds, supportedKinds, programmed) => {
    const result = translate({
      gateways: [gateway({ listeners: [listener("http", { allowedRoutes: { kinds } })] })],
    });
    const status = result.statuses.gateways.get("infra/gw")?.listeners[0];
    expect(status?.supportedKinds).toEqual(supportedKinds);
    expect(summaryOf(status?.conditions)).toContain("ResolvedRefs=False/InvalidRouteKinds");
    expect(summaryOf(status?.conditions)).toContain(programmed);
  });

  it("does not accept a Gateway that asks for an address type edgeslice does not know", () => {
    const gw = gateway({ spec: { addresses: [{ type: "example.com/named", value: "edge" }] } });
    const status = translate({ gateways: [gw] }).statuses.gateways.get("infra/gw");
    expect(summaryOf(status?.conditions)).toEqual([
      "Accepted=False/UnsupportedAddress",
      "Programmed=False/Invalid",
    ]);
    expect(summaryOf(status?.listeners[0]?.conditions)).toContain("Programmed=False/Invalid");
  });
});

import { describe, expect, it } from "vitest";
import type { Result } from "../../../../lib/result.js";
import { DEFAULT_ROUTE_SETTINGS, desiredRoutes } from "../../../../sync/translate/desired-routes.js";
import { parseTLSRoute, type TLSRoute } from "../../../../sync/translate/gateway/tls-route.js";
import { emptyRouteObjects } from "../../../../sync/translate/route-objects.js";
import { createTestAuthority, tlsSecret } from "../../../support/certificates.js";
import {
  gateway,
  gatewayClass,
  httpRoute,
  listener,
  listenerSummary,
  parentConditions,
  referenceGrant,
  SERVICES,
  service,
  toService,
  translate,
} from "./fixtures.js";

/** TLSRoute (gateway.networking.k8s.io/v1) into passthrough route records, through Gateway infra/gw. */
function tlsRoute(name: string, spec: Record<string, unknown>, namespace = "infra"): TLSRoute {
  const result: Result<TLSRoute> = parseTLSRoute({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "TLSRoute",
    metadata: { name, namespace, generation: 5, creationTimestamp: "2024-01-01T00:00:00Z" },
    spec: { parentRefs: [{ name: "gw" }], ...spec },
  });
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

const passthrough = (name: string, extra: Record<string, unknown> = {}) =>
  listener(name, { port: 443, protocol: "TLS", tls: { mode: "Passthrough" }, ...extra });
const tlsGateway = (listeners = [passthrough("tls")]) => gateway({ listeners });
const toTls = { backendRefs: [{ name: "tls-backend", port: 443 }] };
const TLS_SERVICES = [...SERVICES, service("tls-backend", "infra", [{ name: "https", port: 443 }])];

function tlsConditions(result: ReturnType<typeof translate>, key: string, parent = 0): string[] {
  const parents = result.statuses.tlsRoutes?.get(key) ?? [];
  return (parents[parent]?.conditions ?? []).map((item) => `${item.type}=${item.status}/${item.reason}`);
}

describe("TLSRoute translation", () => {
  it("publishes a tlsroute record of its SNI hostnames, listener and weighted backends (TLSRouteSimpleSameNamespace)", () => {
    const result = translate({
      gateways: [tlsGateway([passthrough("https", { hostname: "*.example.com" })])],
      services: TLS_SERVICES,
      tlsRoutes: [tlsRoute("simple", { hostnames: ["abc.example.com"], rules: [toTls] })],
    });
    expect(result.routes).toEqual([
      {
        v: 2,
        id: "tlsroute:infra/simple",
        source: "tlsroute",
        createdAt: Date.parse("2024-01-01T00:00:00Z"),
        hostnames: ["abc.example.com"],
        wildcard: "suffix",
        listeners: [
          {
            gateway: "infra/gw",
            port: 443,
            listenerHostname: "*.example.com",
            hostnames: ["abc.example.com"],
          },
        ],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
            filters: {},
            backends: [{ service: "infra/tls-backend", port: 443, weight: 1 }],
          },
        ],
      },
    ]);
    expect(tlsConditions(result, "infra/simple")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
    expect(listenerSummary(result)).toEqual([
      "https: 1 Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts",
    ]);
    expect(result.statuses.gateways.get("infra/gw")?.listeners[0]?.supportedKinds).toEqual([
      { group: "gateway.networking.k8s.io", kind: "TLSRoute" },
    ]);
  });

  it("serves the intersection of its hostnames with the listener's (TLSRouteHostnameIntersection)", () => {
    const result = translate({
      gateways: [tlsGateway([passthrough("tls", { hostname: "*.com" })])],
      services: TLS_SERVICES,
      tlsRoutes: [tlsRoute("wide", { hostnames: ["*.example.com", "abc.example.org"], rules: [toTls] })],
    });
    expect(result.routes[0]?.hostnames).toEqual(["*.example.com"]);
  });

  it("is NoMatchingListenerHostname when no hostname meets the listener's (TLSRouteInvalidNoMatchingListenerHostname)", () => {
    const result = translate({
      gateways: [tlsGateway([passthrough("tls", { hostname: "www.example.com" })])],
      services: TLS_SERVICES,
      tlsRoutes: [tlsRoute("mismatch", { hostnames: ["www.nomatch.com", "*.nomatch.com"], rules: [toTls] })],
    });
    expect(result.routes).toEqual([]);
    expect(tlsConditions(result, "infra/mismatch")[0]).toBe("Accepted=False/NoMatchingListenerHostname");
    expect(listenerSummary(result)[0]).toMatch(/^tls: 0 /);
  });

  it("is not allowed on HTTP or HTTPS listeners, and an HTTPRoute is not allowed on a TLS one (TLSRouteInvalidNoMatchingListener, HTTPRouteDisallowedKind)", () => {
    const result = translate({
      gateways: [
        gateway({ name: "http-only", listeners: [listener("http")] }),
        gateway({ name: "https-only", listeners: [listener("https", { port: 443, protocol: "HTTPS" })] }),
        gateway({ name: "tls-only", listeners: [passthrough("tls")] }),
      ],
      services: TLS_SERVICES,
      tlsRoutes: [
        tlsRoute("on-http", { parentRefs: [{ name: "http-only" }], hostnames: ["a.test"], rules: [toTls] }),
        tlsRoute("on-https", { parentRefs: [{ name: "https-only" }], hostnames: ["a.test"], rules: [toTls] }),
        tlsRoute("no-section", {
          parentRefs: [{ name: "tls-only", sectionName: "nonexistent" }],
          hostnames: ["a.test"],
          rules: [toTls],
        }),
      ],
      httpRoutes: [
        httpRoute("disallowed", {
          parentRefs: [{ name: "tls-only" }],
          rules: [toService("infra-backend-v1")],
        }),
      ],
    });
    expect(tlsConditions(result, "infra/on-http")[0]).toBe("Accepted=False/NotAllowedByListeners");
    expect(tlsConditions(result, "infra/on-https")[0]).toBe("Accepted=False/NotAllowedByListeners");
    expect(tlsConditions(result, "infra/no-section")[0]).toBe("Accepted=False/NoMatchingParent");
    expect(parentConditions(result, "infra/disallowed")).toEqual([
      "Accepted=False/NotAllowedByListeners",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
    expect(result.routes).toEqual([]);
    for (const name of ["http-only", "https-only", "tls-only"]) {
      expect(listenerSummary(result, `infra/${name}`)[0]).toMatch(/^\S+: 0 /);
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["a Service that does not exist", { name: "nonexistent", port: 443 }, "BackendNotFound"],
    [
      "another kind",
      { group: "unknownkind.example.com", kind: "NonExistent", name: "tls-backend", port: 443 },
      "InvalidKind",
    ],
    [
      "another namespace without a ReferenceGrant",
      { name: "tls-backend", namespace: "apps", port: 443 },
      "RefNotPermitted",
    ],
  ])("stays accepted with %s, ResolvedRefs=False %s", (_case, ref, reason) => {
    const result = translate({
      gateways: [tlsGateway()],
      services: [...TLS_SERVICES, service("tls-backend", "apps", [{ port: 443 }])],
      tlsRoutes: [tlsRoute("invalid", { hostnames: ["example.com"], rules: [{ backendRefs: [ref] }] })],
    });
    expect(tlsConditions(result, "infra/invalid")).toEqual([
      "Accepted=True/Accepted",
      `ResolvedRefs=False/${reason}`,
    ]);
  });

  it("takes a ReferenceGrant only when it names TLSRoute as the from kind (TLSRouteInvalidReferenceGrant)", () => {
    const route = tlsRoute("cross", {
      hostnames: ["abc.example.com"],
      rules: [{ backendRefs: [{ name: "tls-backend", namespace: "apps", port: 443 }] }],
    });
    const services = [...TLS_SERVICES, service("tls-backend", "apps", [{ port: 443 }])];
    const from = (kind: string) => [{ group: "gateway.networking.k8s.io", kind, namespace: "infra" }];
    const to = [{ group: "", kind: "Service", name: "tls-backend" }];
    const wrong = translate({
      gateways: [tlsGateway()],
      services,
      tlsRoutes: [route],
      referenceGrants: [
        referenceGrant("apps", from("Gateway"), to),
        referenceGrant("infra", from("TLSRoute"), to),
      ],
    });
    expect(tlsConditions(wrong, "infra/cross")[1]).toBe("ResolvedRefs=False/RefNotPermitted");
    const granted = translate({
      gateways: [tlsGateway()],
      services,
      tlsRoutes: [route],
      referenceGrants: [referenceGrant("apps", from("TLSRoute"), to)],
    });
    expect(tlsConditions(granted, "infra/cross")[1]).toBe("ResolvedRefs=True/ResolvedRefs");
  });

  it("relays to a port of any appProtocol: the router never reads the bytes", () => {
    const result = translate({
      gateways: [tlsGateway()],
      services: [service("secure", "infra", [{ port: 443, appProtocol: "kubernetes.io/wss" }])],
      tlsRoutes: [
        tlsRoute("wss", { hostnames: ["a.test"], rules: [{ backendRefs: [{ name: "secure", port: 443 }] }] }),
      ],
    });
    expect(tlsConditions(result, "infra/wss")[1]).toBe("ResolvedRefs=True/ResolvedRefs");
  });
});

describe("TLS listeners", () => {
  it("supports TLSRoute only, and says InvalidRouteKinds for a kind it does not serve (TLSRouteListenerPassthroughSupportedKinds)", () => {
    const result = translate({
      gateways: [
        tlsGateway([
          passthrough("tls-passthrough", {
            allowedRoutes: { kinds: [{ kind: "TCPRoute" }, { kind: "TLSRoute" }] },
          }),
        ]),
      ],
    });
    const status = result.statuses.gateways.get("infra/gw")?.listeners[0];
    expect(status?.supportedKinds).toEqual([{ group: "gateway.networking.k8s.io", kind: "TLSRoute" }]);
    expect(listenerSummary(result)[0]).toContain("ResolvedRefs=False/InvalidRouteKinds");
  });

  it("is accepted in mode Terminate, the API's default, with its certificateRefs (TLSRouteListenerTerminateSupportedKinds)", () => {
    const terminate = listener("tls-terminate", {
      port: 8443,
      protocol: "TLS",
      hostname: "tls.example.com",
      tls: { mode: "Terminate", certificateRefs: [{ name: "terminate" }] },
    });
    const defaulted = listener("tls-default", {
      port: 8444,
      protocol: "TLS",
      hostname: "tls.example.com",
      tls: { certificateRefs: [{ name: "terminate" }] },
    });
    const bare = listener("tls-bare", { port: 8445, protocol: "TLS" });
    const unknown = listener("tls-unknown", { port: 8446, protocol: "TLS", tls: { mode: "Reencrypt" } });
    const certificate = createTestAuthority("terminate CA").issue(["tls.example.com"]);
    const result = translate({
      gateways: [gateway({ listeners: [terminate, defaulted, bare, unknown] })],
      secrets: [tlsSecret("infra", "terminate", certificate)] as never[],
    });
    expect(listenerSummary(result)).toEqual([
      expect.stringMatching(
        /^tls-terminate: 0 Accepted=True\/Accepted Programmed=True\/Programmed ResolvedRefs=True/,
      ),
      expect.stringMatching(
        /^tls-default: 0 Accepted=True\/Accepted Programmed=True\/Programmed ResolvedRefs=True/,
      ),
      expect.stringMatching(/^tls-bare: 0 Accepted=False\/UnsupportedValue /),
      expect.stringMatching(/^tls-unknown: 0 Accepted=False\/UnsupportedValue /),
    ]);
    const kinds = result.statuses.gateways.get("infra/gw")?.listeners.map((status) => status.supportedKinds);
    expect(kinds).toEqual([
      [{ group: "gateway.networking.k8s.io", kind: "TLSRoute" }],
      expect.anything(),
      [],
      [],
    ]);
    // The listener's certificate is published for the router to end TLS with.
    expect(result.certificates.map((use) => [use.id, use.hostnames])).toEqual([
      ["infra/terminate", ["tls.example.com"]],
    ]);
  });

  it("marks the listeners of a TLSRoute on a Terminate listener tlsMode Terminate, a Passthrough one's not (TLSRouteMixedTerminationSameNamespace)", () => {
    const certificate = createTestAuthority("terminate CA").issue(["tls.example.com"]);
    const result = translate({
      gateways: [
        gateway({
          listeners: [
            listener("tls-terminate", {
              port: 8883,
              protocol: "TLS",
              hostname: "tls.example.com",
              tls: { mode: "Terminate", certificateRefs: [{ name: "terminate" }] },
            }),
            passthrough("tls-passthrough", { port: 8883, hostname: "abc.example.com" }),
          ],
        }),
      ],
      secrets: [tlsSecret("infra", "terminate", certificate)] as never[],
      services: TLS_SERVICES,
      tlsRoutes: [
        tlsRoute("passthrough", { hostnames: ["abc.example.com"], rules: [toTls] }),
        tlsRoute("terminate", { hostnames: ["tls.example.com"], rules: [toTls] }),
      ],
    });
    expect(result.routes.map((route) => [route.id, route.listeners])).toEqual([
      [
        "tlsroute:infra/passthrough",
        [
          {
            gateway: "infra/gw",
            port: 8883,
            listenerHostname: "abc.example.com",
            hostnames: ["abc.example.com"],
          },
        ],
      ],
      [
        "tlsroute:infra/terminate",
        [
          {
            gateway: "infra/gw",
            port: 8883,
            listenerHostname: "tls.example.com",
            hostnames: ["tls.example.com"],
            tlsMode: "Terminate",
          },
        ],
      ],
    ]);
    expect(listenerSummary(result)).toEqual([
      expect.stringMatching(/^tls-terminate: 1 Accepted=True\/Accepted .*Conflicted=False\/NoConflicts/),
      expect.stringMatching(/^tls-passthrough: 1 Accepted=True\/Accepted .*Conflicted=False\/NoConflicts/),
    ]);
  });

  it("shares a port with an HTTPS listener (told apart by SNI), but not with an HTTP one", () => {
    const shared = translate({
      gateways: [
        gateway({
          listeners: [
            listener("https", { port: 443, protocol: "HTTPS", hostname: "www.example.com" }),
            passthrough("tls", { hostname: "db.example.com" }),
          ],
        }),
      ],
    });
    for (const line of listenerSummary(shared)) expect(line).toContain("Conflicted=False/NoConflicts");
    const clash = translate({
      gateways: [gateway({ listeners: [listener("http", { port: 443 }), passthrough("tls")] })],
    });
    for (const line of listenerSummary(clash)) expect(line).toContain("Accepted=False/ProtocolConflict");
  });
});

describe("TLSRoutes among the cluster's routes", () => {
  it("never conflict with an HTTPRoute of the same host, and the older of two TLSRoutes of one SNI serves it", () => {
    const objects = {
      ...emptyRouteObjects(),
      gatewayClasses: [gatewayClass()],
      gateways: [
        gateway({
          listeners: [
            listener("https", { port: 443, protocol: "HTTPS" }),
            passthrough("tls", { hostname: "*.test" }),
          ],
        }),
      ],
      httpRoutes: [httpRoute("web", { hostnames: ["a.test"], rules: [toService("infra-backend-v1")] })],
      tlsRoutes: [
        tlsRoute("older", { hostnames: ["a.test"], rules: [toTls] }),
        {
          ...tlsRoute("newer", { hostnames: ["a.test"], rules: [toTls] }),
          metadata: {
            name: "newer",
            namespace: "infra",
            generation: 1,
            creationTimestamp: "2025-01-01T00:00:00Z",
          },
        },
      ],
    };
    const desired = desiredRoutes({ services: TLS_SERVICES, objects, settings: DEFAULT_ROUTE_SETTINGS });
    expect([...desired.routes.keys()]).toEqual([
      "httproute:infra/web",
      "tlsroute:infra/newer",
      "tlsroute:infra/older",
    ]);
    expect(desired.conflicts).toEqual([
      {
        host: "a.test",
        match: "PathPrefix /",
        winner: "tlsroute:infra/older",
        loser: "tlsroute:infra/newer",
      },
    ]);
    const ownership = (key: string) =>
      desired.statuses.tlsRoutes
        ?.get(key)?.[0]
        ?.conditions.find((item) => item.type === "edgeslice.io/HostOwnership");
    expect(ownership("infra/older")?.status).toBe("True");
    expect(ownership("infra/newer")?.reason).toBe("ShadowedByOlderRoute");
  });
});

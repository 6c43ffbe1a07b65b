import { describe, expect, it } from "vitest";
import { translateGatewayApi } from "../../../../sync/translate/gateway/translate.js";
import { tlsMaterialOf } from "../../../../sync/translate/tls-secrets.js";
import { createTestAuthority, tlsSecret } from "../../../support/certificates.js";

const ca = createTestAuthority();
const shop = ca.issue(["shop.example.com", "www.shop.example.com"]);
const other = ca.issue(["other.example.com"]);

const CLASS = {
  metadata: { name: "edgeslice" },
  spec: { controllerName: "edgeslice.io/gateway-controller" },
};

function gatewayWith(refs: Record<string, unknown>[], hostname?: string) {
  return {
    metadata: { name: "gw", namespace: "infra", generation: 3 },
    spec: {
      gatewayClassName: "edgeslice",
      listeners: [
        {
          name: "https",
          port: 443,
          protocol: "HTTPS",
          ...(hostname ? { hostname } : {}),
          tls: { certificateRefs: refs },
        },
      ],
    },
  };
}

const grant = (to: Record<string, unknown>) => ({
  metadata: { name: "g", namespace: "certs" },
  spec: {
    from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "infra" }],
    to: [{ group: "", kind: "Secret", ...to }],
  },
});

function translate(
  refs: Record<string, unknown>[],
  options: { secrets?: object[]; grants?: object[]; hostname?: string } = {},
) {
  return translateGatewayApi({
    controllerName: "edgeslice.io/gateway-controller",
    gatewayClasses: [CLASS],
    gateways: [gatewayWith(refs, options.hostname)] as never[],
    httpRoutes: [],
    referenceGrants: (options.grants ?? []) as never[],
    services: [],
    secrets: (options.secrets ?? [tlsSecret("infra", "shop", shop)]) as never[],
  });
}

function listenerOf(result: ReturnType<typeof translate>) {
  const listener = result.statuses.gateways.get("infra/gw")?.listeners[0];
  const byType = new Map(listener?.conditions.map((item) => [item.type, item]));
  return {
    resolved: byType.get("ResolvedRefs") && {
      status: byType.get("ResolvedRefs")?.status,
      reason: byType.get("ResolvedRefs")?.reason,
    },
    programmed: byType.get("Programmed")?.status,
  };
}

describe("an HTTPS listener's certificateRefs", () => {
  const wrongType = { ...tlsSecret("infra", "shop", shop), type: "Opaque" };
  const mismatched = tlsSecret("infra", "shop", { cert: shop.cert, key: other.key });
  const notPem = tlsSecret("infra", "shop", { cert: "Hello world\n", key: "Hello world\n" });

  it.each([
    ["a Secret of the Gateway's namespace", [{ name: "shop" }], {}, "True", "ResolvedRefs", "True"],
    [
      "a Secret of another namespace a ReferenceGrant allows by name",
      [{ name: "shop", namespace: "certs" }],
      { secrets: [tlsSecret("certs", "shop", shop)], grants: [grant({ name: "shop" })] },
      "True",
      "ResolvedRefs",
      "True",
    ],
    [
      "a Secret of another namespace with no ReferenceGrant",
      [{ name: "shop", namespace: "certs" }],
      { secrets: [tlsSecret("certs", "shop", shop)] },
      "False",
      "RefNotPermitted",
      "False",
    ],
    [
      "a missing Secret of another namespace with no ReferenceGrant (RefNotPermitted first)",
      [{ name: "none", namespace: "certs" }],
      {},
      "False",
      "RefNotPermitted",
      "False",
    ],
    [
      "a ReferenceGrant for another Secret",
      [{ name: "shop", namespace: "certs" }],
      { secrets: [tlsSecret("certs", "shop", shop)], grants: [grant({ name: "other" })] },
      "False",
      "RefNotPermitted",
      "False",
    ],
    ["a Secret that does not exist", [{ name: "none" }], {}, "False", "InvalidCertificateRef", "False"],
    [
      "another group",
      [{ group: "wrong.example.io", kind: "Secret", name: "shop" }],
      {},
      "False",
      "InvalidCertificateRef",
      "False",
    ],
    [
      "another kind",
      [{ group: "", kind: "ConfigMap", name: "shop" }],
      {},
      "False",
      "InvalidCertificateRef",
      "False",
    ],
    [
      "a Secret of type Opaque",
      [{ name: "shop" }],
      { secrets: [wrongType] },
      "False",
      "InvalidCertificateRef",
      "False",
    ],
    [
      "a key that does not match the certificate",
      [{ name: "shop" }],
      { secrets: [mismatched] },
      "False",
      "InvalidCertificateRef",
      "False",
    ],
    [
      "data that is not PEM",
      [{ name: "shop" }],
      { secrets: [notPem] },
      "False",
      "InvalidCertificateRef",
      "False",
    ],
    [
      "one valid and one missing Secret (the valid one still serves)",
      [{ name: "shop" }, { name: "none" }],
      {},
      "False",
      "InvalidCertificateRef",
      "True",
    ],
  ])("%s: ResolvedRefs %s %s, Programmed %s", (_name, refs, options, status, reason, programmed) => {
    const listener = listenerOf(translate(refs, options));
    expect(listener.resolved).toEqual({ status, reason });
    expect(listener.programmed).toBe(programmed);
  });

  it("publishes a certificate for the listener's hostname, or for its SANs and any host when it has none", () => {
    const named = translate([{ name: "shop" }], { hostname: "shop.example.com" }).certificates;
    expect(named.map(({ id, hostnames, anyHost }) => ({ id, hostnames, anyHost }))).toEqual([
      { id: "infra/shop", hostnames: ["shop.example.com"], anyHost: false },
    ]);
    const open = translate([{ name: "shop" }]).certificates;
    expect(open.map(({ hostnames, anyHost }) => ({ hostnames, anyHost }))).toEqual([
      { hostnames: ["shop.example.com", "www.shop.example.com"], anyHost: true },
    ]);
    expect(open[0]?.material.key).toBe(shop.key);
  });

  it("keeps the routes of a listener none of whose certificates resolves attached (TLS may end in front)", () => {
    const result = translateGatewayApi({
      controllerName: "edgeslice.io/gateway-controller",
      gatewayClasses: [CLASS],
      gateways: [gatewayWith([{ name: "none" }])] as never[],
      httpRoutes: [
        {
          metadata: { name: "web", namespace: "infra" },
          spec: { parentRefs: [{ name: "gw" }], hostnames: ["shop.example.com"], rules: [{}] },
        },
      ] as never[],
      referenceGrants: [],
      services: [],
      secrets: [],
    });
    const listener = result.statuses.gateways.get("infra/gw")?.listeners[0];
    expect(listener?.attachedRoutes).toBe(1);
    expect(listener?.conditions.find((item) => item.type === "Programmed")?.status).toBe("False");
    expect(result.routes.map((route) => route.id)).toEqual(["httproute:infra/web"]);
    expect(result.certificates).toEqual([]);
  });

  it("publishes nothing for a listener whose references do not resolve", () => {
    expect(
      translate([{ name: "shop", namespace: "certs" }], { secrets: [tlsSecret("certs", "shop", shop)] })
        .certificates,
    ).toEqual([]);
  });
});

describe("a TLS Secret's certificate", () => {
  it("reads tls.crt and tls.key, the leaf's DNS names, and a version that changes with the chain", () => {
    const material = tlsMaterialOf(tlsSecret("infra", "shop", shop) as never);
    expect(material.ok && material.value.names).toEqual(["shop.example.com", "www.shop.example.com"]);
    const renewed = tlsMaterialOf(tlsSecret("infra", "shop", ca.issue(["shop.example.com"])) as never);
    expect(material.ok && renewed.ok && material.value.version !== renewed.value.version).toBe(true);
  });

  it("reads stringData as a manifest may carry it", () => {
    const secret = {
      metadata: { name: "s", namespace: "n" },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": shop.cert, "tls.key": shop.key },
    };
    expect(tlsMaterialOf(secret).ok).toBe(true);
  });
});

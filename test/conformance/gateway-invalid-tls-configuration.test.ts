import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { conditionOf, startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

const HOST_OF: Record<string, string> = {
  "gateway-certificate-nonexistent-secret": "nonexistent-certificate.example.com",
  "gateway-certificate-unsupported-group": "unsupported-group-certificate.example.com",
  "gateway-certificate-unsupported-kind": "unsupported-kind-certificate.example.com",
  "gateway-certificate-malformed-secret": "malformed-certificate.example.com",
};

/** A Gateway with an HTTP listener and an HTTPS listener whose only certificateRef is `ref`, and its control route. */
function gatewayWith(name: string, ref: Record<string, unknown>) {
  return [
    gatewayObject(name, [
      httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
      {
        name: "https",
        port: 443,
        protocol: "HTTPS",
        allowedRoutes: { namespaces: { from: "All" } },
        tls: { certificateRefs: [ref] },
      },
    ]),
    httpRouteObject(`${name}-control`, {
      parentRefs: [{ name, sectionName: "http" }],
      hostnames: [HOST_OF[name]],
      rules: [{ backendRefs: [backend("infra-backend-v1")] }],
    }),
  ];
}

/**
 * Conformance GatewayInvalidTLSConfiguration: an HTTPS listener whose certificateRef names a Secret that does
 * not exist, another group, another kind, or a Secret whose data is not PEM gets ResolvedRefs=False with
 * reason InvalidCertificateRef and no attached routes, while the Gateway's HTTP listener keeps serving.
 */
describe("GatewayInvalidTLSConfiguration", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    const hello = Buffer.from("Hello world\n").toString("base64");
    world = await startTlsConformance({
      label: "invalid-tls",
      objects: [
        ...gatewayWith("gateway-certificate-nonexistent-secret", {
          group: "",
          kind: "Secret",
          name: "nonexistent-certificate",
        }),
        ...gatewayWith("gateway-certificate-unsupported-group", {
          group: "wrong.group.company.io",
          kind: "Secret",
          name: "tls-validity-checks-certificate",
        }),
        ...gatewayWith("gateway-certificate-unsupported-kind", {
          group: "",
          kind: "WrongKind",
          name: "tls-validity-checks-certificate",
        }),
        ...gatewayWith("gateway-certificate-malformed-secret", {
          group: "",
          kind: "Secret",
          name: "malformed-certificate",
        }),
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "malformed-certificate", namespace: INFRA },
          type: "kubernetes.io/tls",
          data: { "tls.crt": hello, "tls.key": hello },
        },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it.each(Object.keys(HOST_OF))(
    "%s: the HTTPS listener has ResolvedRefs=False InvalidCertificateRef",
    async (gateway) => {
      const conditions = await untilTrue(
        () => world.listenerConditions(gateway, "https"),
        (items) => conditionOf(items, "ResolvedRefs") !== undefined,
      );
      expect(conditionOf(conditions, "ResolvedRefs")).toEqual({
        status: "False",
        reason: "InvalidCertificateRef",
      });
      expect(conditionOf(conditions, "Programmed")?.status).toBe("False");
      const status = world.cluster.kube.get("Gateway", INFRA, gateway)?.status as {
        listeners: { name: string; attachedRoutes: number; supportedKinds: { kind: string }[] }[];
      };
      const https = status.listeners.find((item) => item.name === "https");
      expect(https?.attachedRoutes).toBe(0);
      expect(https?.supportedKinds.map((kind) => kind.kind)).toContain("HTTPRoute");
    },
  );

  it("keeps serving the control route of the HTTP listener", async () => {
    const http = await untilTrue(
      () => world.listenerConditions("gateway-certificate-malformed-secret", "http"),
      (items) => conditionOf(items, "Programmed")?.status === "True",
    );
    expect(conditionOf(http, "ResolvedRefs")?.status).toBe("True");
  });
});

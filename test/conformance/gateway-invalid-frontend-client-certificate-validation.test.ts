import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  caRef,
  clientCertificateWorld,
  gatewayWithFrontend,
  httpsListener,
} from "./support/client-certificates.js";
import { WEB } from "./support/conformance-base.js";
import { conditionOf, startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance GatewayInvalidFrontendClientCertificateValidation: an invalid per-port client validation affects
 * only its port's listener: a ConfigMap that does not exist (InvalidCACertificateRef), a Service (kind:
 * InvalidCACertificateKind), a ConfigMap of another namespace without a ReferenceGrant (RefNotPermitted), each
 * ResolvedRefs=False with that reason, Accepted=False/NoValidCACertificate and not Programmed, while the listener
 * on the valid default's port is accepted, resolved and programmed.
 */
const GATEWAY = "gateway-with-invalid-client-cert-validation";
const certificates = clientCertificateWorld();
const perPort = (port: number, ref: Record<string, unknown>) => ({
  port,
  tls: { validation: { caCertificateRefs: [ref] } },
});

const CASES = [
  ["https-unresolved", "False", "InvalidCACertificateRef"],
  ["https-invalid-kind", "False", "InvalidCACertificateKind"],
  ["https-grant-missing", "False", "RefNotPermitted"],
] as const;

describe("conformance GatewayInvalidFrontendClientCertificateValidation", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "client-cert-invalid",
      objects: [
        ...certificates.objects,
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "web-backend-cm", namespace: WEB },
          data: { "ca.crt": certificates.serverCa.cert },
        },
        gatewayWithFrontend(
          GATEWAY,
          {
            default: { validation: { caCertificateRefs: [caRef("tls-validity-checks-ca-certificate")] } },
            perPort: [
              perPort(7443, caRef("non-exisitng-cm")),
              perPort(8443, { kind: "Service", group: "", name: "infra-backend-v2" }),
              perPort(6443, { ...caRef("web-backend-cm"), namespace: WEB }),
            ],
          },
          [
            httpsListener("https", 443),
            httpsListener("https-unresolved", 7443, "first-example.org"),
            httpsListener("https-invalid-kind", 8443, "second-example.org"),
            httpsListener("https-grant-missing", 6443, "fourth-example.org"),
          ],
        ),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("accepts, resolves and programs the listener of the valid default configuration", async () => {
    const conditions = await untilTrue(
      () => world.listenerConditions(GATEWAY, "https"),
      (found) => conditionOf(found, "Programmed")?.status === "True",
    );
    for (const type of ["ResolvedRefs", "Accepted", "Programmed"])
      expect(conditionOf(conditions, type)?.status).toBe("True");
  });

  it.each(CASES)(
    "%s: ResolvedRefs=%s/%s, Accepted=False/NoValidCACertificate, not Programmed",
    async (listener, status, reason) => {
      const conditions = await untilTrue(
        () => world.listenerConditions(GATEWAY, listener),
        (found) => conditionOf(found, "ResolvedRefs")?.reason === reason,
      );
      expect(conditionOf(conditions, "ResolvedRefs")).toEqual({ status, reason });
      expect(conditionOf(conditions, "Accepted")).toEqual({
        status: "False",
        reason: "NoValidCACertificate",
      });
      expect(conditionOf(conditions, "Programmed")?.status).toBe("False");
    },
  );
});

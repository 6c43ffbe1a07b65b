import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, httpListener, INFRA, WEB } from "./support/conformance-base.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";
import {
  conditionOf,
  httpsBaseObjects,
  startTlsConformance,
  type TlsConformance,
} from "./support/tls-fixture.js";

/** Each Gateway of the official test, and the ResolvedRefs reason its backend clientCertificateRef gets. */
const CASES: Record<string, { readonly ref: Record<string, unknown>; readonly reason: string }> = {
  "gateway-client-certificate-nonexistent-secret": {
    ref: { group: "", kind: "Secret", name: "nonexistent-certificate" },
    reason: "InvalidClientCertificateRef",
  },
  "gateway-client-certificate-unsupported-group": {
    ref: { group: "wrong.group.company.io", kind: "Secret", name: "tls-validity-checks-certificate" },
    reason: "InvalidClientCertificateRef",
  },
  "gateway-client-certificate-unsupported-kind": {
    ref: { group: "", kind: "WrongKind", name: "tls-validity-checks-certificate" },
    reason: "InvalidClientCertificateRef",
  },
  "gateway-client-certificate-malformed-secret": {
    ref: { group: "", kind: "Secret", name: "malformed-client-certificate" },
    reason: "InvalidClientCertificateRef",
  },
  "gateway-client-certificate-missing-reference-grant": {
    ref: { group: "", kind: "Secret", name: "certificate", namespace: WEB },
    reason: "RefNotPermitted",
  },
};

/** Gateway `name` with one HTTP listener on 80 and `ref` as its backend client certificate. */
function withBackendClient(name: string, ref: Record<string, unknown>) {
  const gateway = gatewayObject(name, [
    httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
  ]);
  const spec = gateway.spec as Record<string, unknown>;
  return { ...gateway, spec: { ...spec, tls: { backend: { clientCertificateRef: ref } } } };
}

/**
 * Conformance GatewayInvalidTLSBackendConfiguration: a Gateway whose spec.tls.backend.clientCertificateRef
 * names a Secret that does not exist, another group, another kind or an empty Secret has ResolvedRefs=False
 * InvalidClientCertificateRef, one naming a Secret of another namespace without a ReferenceGrant
 * RefNotPermitted; each stays Accepted, every condition at its current generation.
 */
describe("GatewayInvalidTLSBackendConfiguration", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "invalid-tls-backend",
      objects: [
        ...httpsBaseObjects(),
        ...Object.entries(CASES).map(([name, { ref }]) => withBackendClient(name, ref)),
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "malformed-client-certificate", namespace: INFRA },
          type: "Opaque",
          data: {},
        },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it.each(Object.entries(CASES))("%s: ResolvedRefs=False, still Accepted", async (name, { reason }) => {
    const found = await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, name),
      (read) => hasLatestConditions(read) && read.conditions.some((item) => item.type === "ResolvedRefs"),
    );
    expect(hasLatestConditions(found)).toBe(true);
    const status = world.cluster.kube.get("Gateway", INFRA, name)?.status as
      | { conditions?: { type: string; status: string; reason: string }[] }
      | undefined;
    const own = status?.conditions ?? [];
    expect(conditionOf(own, "ResolvedRefs")).toEqual({ status: "False", reason });
    expect(conditionOf(own, "Accepted")).toEqual({ status: "True", reason: "Accepted" });
  });
});

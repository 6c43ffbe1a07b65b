import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../../fake-kube/store.js";
import { createTestAuthority, tlsSecret } from "../../support/certificates.js";
import { GATEWAY_API, gatewayObject, INFRA, WEB } from "./conformance-base.js";
import { conditionOf, startTlsConformance, type TlsConformance, untilTrue } from "./tls-fixture.js";

/** An HTTPS listener whose certificateRef names Secret `name` of the web-backend namespace. */
export function crossNamespaceListener(listener: string, name: string, extra: Record<string, unknown> = {}) {
  return {
    name: listener,
    port: 443,
    protocol: "HTTPS",
    allowedRoutes: { namespaces: { from: "All" } },
    tls: { certificateRefs: [{ group: "", kind: "Secret", name, namespace: WEB }] },
    ...extra,
  };
}

/** A ReferenceGrant in the web-backend namespace from Gateways of the infra namespace to Secrets (`to` entry). */
export function secretGrant(name: string, to: Record<string, unknown>): ApplyInput {
  return {
    apiVersion: GATEWAY_API,
    kind: "ReferenceGrant",
    metadata: { name, namespace: WEB },
    spec: {
      from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: INFRA }],
      to: [{ group: "", kind: "Secret", ...to }],
    },
  };
}

/**
 * The Gateway `gateway-secret-reference-grant` with one HTTPS listener using the base Secret `certificate` of
 * the web-backend namespace, with `grant` (a ReferenceGrant) or none: granted, the listener is Programmed with
 * its refs resolved and a handshake gets that certificate; not granted, ResolvedRefs=False RefNotPermitted.
 */
export function describeSecretGrantConformance(
  name: string,
  options: {
    readonly grants: readonly ApplyInput[];
    readonly granted: boolean;
    /** More HTTPS listeners of the Gateway, each expected with the same ResolvedRefs as `https`. */
    readonly moreListeners?: readonly { readonly name: string }[];
  },
): void {
  describe(name, () => {
    let world: TlsConformance;
    beforeAll(async () => {
      const certificate = createTestAuthority().issue(["grant.example.org"]);
      world = await startTlsConformance({
        label: "grant",
        objects: [
          tlsSecret(WEB, "certificate", certificate),
          gatewayObject("gateway-secret-reference-grant", [
            crossNamespaceListener("https", "certificate"),
            ...(options.moreListeners ?? []),
          ]),
          ...options.grants,
        ],
      });
    }, 60_000);
    afterAll(async () => {
      await world?.stop();
    });

    if (options.granted) {
      it("programs the listener with its references resolved, and serves the granted certificate", async () => {
        const conditions = await untilTrue(
          () => world.listenerConditions("gateway-secret-reference-grant", "https"),
          (items) => conditionOf(items, "Programmed")?.status === "True",
        );
        expect(conditionOf(conditions, "Programmed")).toEqual({ status: "True", reason: "Programmed" });
        expect(conditionOf(conditions, "ResolvedRefs")?.status).toBe("True");
        const answer = await untilTrue(
          () => world.curl({ sni: "grant.example.org" }),
          (item) => item.status !== 0,
        );
        expect(answer.subject).toContain("grant.example.org");
      });
    } else {
      it("reports ResolvedRefs=False RefNotPermitted and serves no certificate", async () => {
        for (const listener of ["https", ...(options.moreListeners ?? []).map((item) => item.name)]) {
          const conditions = await untilTrue(
            () => world.listenerConditions("gateway-secret-reference-grant", listener),
            (items) => conditionOf(items, "ResolvedRefs") !== undefined,
          );
          expect([listener, conditionOf(conditions, "ResolvedRefs")]).toEqual([
            listener,
            { status: "False", reason: "RefNotPermitted" },
          ]);
          expect(conditionOf(conditions, "Programmed")?.status).toBe("False");
        }
        expect((await world.curl({ sni: "grant.example.org" })).status).toBe(0);
      });
    }
  });
}

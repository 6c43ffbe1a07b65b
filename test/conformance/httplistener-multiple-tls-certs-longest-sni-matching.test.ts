import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { gatewayObject, WEB } from "./support/conformance-base.js";
import { crossNamespaceListener, secretGrant } from "./support/secret-grants.js";
import { startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance HTTPSListenerMultiTLSCertsLongestMatchingSNI: one HTTPS listener for `*.example.com` with three
 * wildcard certificates; each handshake gets the certificate whose name matches the SNI longest. (The
 * official manifests name the Secrets after their wildcards, which Secret names cannot hold here.)
 */
describe("HTTPSListenerMultiTLSCertsLongestMatchingSNI", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    const ca = createTestAuthority();
    const names = ["*.xyz.test.example.com", "*.test.example.com", "*.example.com"];
    const secretOf = (name: string) => `wildcard${name.slice(1).replaceAll(".", "-")}`;
    const listener = crossNamespaceListener("https", secretOf(names[0] ?? ""), {
      hostname: "*.example.com",
      allowedRoutes: { namespaces: { from: "Same" } },
      tls: {
        certificateRefs: names.map((name) => ({
          group: "",
          kind: "Secret",
          name: secretOf(name),
          namespace: WEB,
        })),
      },
    });
    world = await startTlsConformance({
      label: "longest-sni",
      objects: [
        ...names.map((name) => tlsSecret(WEB, secretOf(name), ca.issue([name]))),
        secretGrant("longest-sni-matching", {}),
        gatewayObject("longest-sni-matching", [listener]),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it.each([
    ["abc.xyz.test.example.com", "wildcard.xyz.test.example.com"],
    ["test1.example.com", "wildcard.example.com"],
    ["internal.test.example.com", "wildcard.test.example.com"],
  ])("SNI %s gets the certificate of %s", async (sni, subject) => {
    const answer = await untilTrue(
      () => world.curl({ sni }),
      (item) => item.subject !== "",
    );
    expect(answer.subject).toMatch(new RegExp(`CN ?= ?${subject.replaceAll(".", "\\.")}$`));
  });
});

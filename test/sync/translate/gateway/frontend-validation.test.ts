import { describe, expect, it } from "vitest";
import { holdsCaBundle, type KubeConfigMap, parseConfigMap } from "../../../../sync/translate/ca-bundles.js";
import { gatewayStatus } from "../../../../sync/translate/object-status.js";
import { parseSecret } from "../../../../sync/translate/tls-secrets.js";
import { createTestAuthority, tlsSecret } from "../../../support/certificates.js";
import {
  gateway,
  httpRoute,
  listener,
  listenerSummary,
  referenceGrant,
  toService,
  translate,
} from "./fixtures.js";

/**
 * Gateway.spec.tls.frontend (client certificate validation) in the translation: listener conditions as the
 * official GatewayInvalidFrontendClientCertificateValidation and GatewayFrontendInvalidDefault... tests read
 * them, the InsecureFrontendValidationMode Gateway condition, and the validations published per Gateway port.
 */
const authority = createTestAuthority("client CA");
const other = createTestAuthority("per-port client CA");
const serverCertificate = createTestAuthority().issue(["example.org", "second-example.org"]);
const SECRET = (() => {
  const parsed = parseSecret(tlsSecret("infra", "server", serverCertificate));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
})();

function configMap(name: string, data: Record<string, string>, namespace = "infra"): KubeConfigMap {
  const parsed = parseConfigMap({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const CONFIG_MAPS = [
  configMap("ca", { "ca.crt": authority.cert }),
  configMap("per-port-ca", { "ca.crt": other.cert }),
  configMap("garbage", { "ca.crt": "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n" }),
  configMap("web-ca", { "ca.crt": authority.cert }, "web"),
];

const https = (name: string, port: number, hostname?: string) =>
  listener(name, {
    port,
    protocol: "HTTPS",
    ...(hostname ? { hostname } : {}),
    tls: { certificateRefs: [{ name: "server" }] },
  });
const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  group: "",
  kind: "ConfigMap",
  name,
  ...extra,
});
const frontend = (
  frontendSpec: Record<string, unknown>,
  listeners = [https("https", 443), https("https-8443", 8443, "second-example.org")],
) => gateway({ listeners, spec: { tls: { frontend: frontendSpec } } });

function run(gw: ReturnType<typeof gateway>, extra: Parameters<typeof translate>[0] = {}) {
  return translate({ gateways: [gw], secrets: [SECRET], configMaps: CONFIG_MAPS, ...extra });
}

describe("a Gateway's client certificate validation", () => {
  it("publishes the default for every HTTPS port and a perPort entry for its own (GatewayFrontendClientCertificateValidation)", () => {
    const result = run(
      frontend({
        default: { validation: { caCertificateRefs: [ref("ca")] } },
        perPort: [{ port: 8443, tls: { validation: { caCertificateRefs: [ref("per-port-ca")] } } }],
      }),
    );
    expect(result.clientValidations.map(({ bundle, ...rest }) => ({ ...rest, pem: bundle.pem }))).toEqual([
      {
        gateway: "infra/gw",
        port: 443,
        hostnames: [],
        anyHost: true,
        mode: "AllowValidOnly",
        pem: authority.cert,
      },
      {
        gateway: "infra/gw",
        port: 8443,
        hostnames: ["second-example.org"],
        anyHost: false,
        mode: "AllowValidOnly",
        pem: other.cert,
      },
    ]);
    for (const line of listenerSummary(result)) {
      expect(line).toContain("Accepted=True/Accepted");
      expect(line).toContain("ResolvedRefs=True/ResolvedRefs");
    }
    expect(result.statuses.gateways.get("infra/gw")?.conditions.map((item) => item.type)).not.toContain(
      "InsecureFrontendValidationMode",
    );
  });

  it.each<[string, Record<string, unknown>, string, Parameters<typeof translate>[0]]>([
    ["a ConfigMap that does not exist", ref("non-exisitng-cm"), "InvalidCACertificateRef", {}],
    ["a ConfigMap whose ca.crt does not parse", ref("garbage"), "InvalidCACertificateRef", {}],
    [
      "a kind other than ConfigMap",
      { group: "", kind: "Service", name: "infra-backend-v2" },
      "InvalidCACertificateKind",
      {},
    ],
    [
      "another namespace without a ReferenceGrant",
      ref("web-ca", { namespace: "web" }),
      "RefNotPermitted",
      {},
    ],
  ])(
    "refuses a listener whose only caCertificateRef is %s: %s, NoValidCACertificate, not programmed, no route",
    (_case, caRef, reason, extra) => {
      const gw = frontend({ default: { validation: { caCertificateRefs: [caRef] } } }, [https("https", 443)]);
      const result = run(gw, {
        ...extra,
        httpRoutes: [httpRoute("r", { hostnames: ["example.org"], rules: [toService("infra-backend-v1")] })],
      });
      expect(listenerSummary(result)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^https: 0 Accepted=False/NoValidCACertificate Programmed=False/Invalid ResolvedRefs=False/${reason} `,
          ),
        ),
      ]);
      expect(result.clientValidations).toEqual([]);
      expect(result.certificates).toEqual([]);
      expect(result.routes).toEqual([]);
    },
  );

  it("takes a ConfigMap of another namespace a ReferenceGrant from Gateways allows", () => {
    const gw = frontend(
      { default: { validation: { caCertificateRefs: [ref("web-ca", { namespace: "web" })] } } },
      [https("https", 443)],
    );
    const grant = referenceGrant(
      "web",
      [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "infra" }],
      [{ group: "", kind: "ConfigMap" }],
    );
    const result = run(gw, { referenceGrants: [grant] });
    expect(listenerSummary(result)[0]).toContain("ResolvedRefs=True/ResolvedRefs");
    expect(result.clientValidations).toHaveLength(1);
  });

  it("keeps a listener accepted with one usable CA among bad references, saying ResolvedRefs=False", () => {
    const gw = frontend({ default: { validation: { caCertificateRefs: [ref("missing"), ref("ca")] } } }, [
      https("https", 443),
    ]);
    const result = run(gw);
    expect(listenerSummary(result)[0]).toMatch(
      /Accepted=True\/Accepted Programmed=True\/Programmed ResolvedRefs=False\/InvalidCACertificateRef/,
    );
    expect(result.clientValidations[0]?.bundle.pem).toBe(authority.cert);
  });

  it("leaves HTTP listeners alone, whatever the perPort entry for their port says (GatewayFrontendInvalidDefaultClientCertificateValidation)", () => {
    const gw = frontend(
      {
        default: { validation: { caCertificateRefs: [ref("does-not-exist")] } },
        perPort: [{ port: 80, tls: { validation: { caCertificateRefs: [ref("per-port-ca")] } } }],
      },
      [https("https", 443), listener("http", { port: 80 })],
    );
    const summary = listenerSummary(run(gw));
    expect(summary[0]).toMatch(
      /^https: 0 Accepted=False\/NoValidCACertificate .*ResolvedRefs=False\/InvalidCACertificateRef/,
    );
    expect(summary[1]).toMatch(
      /^http: 0 Accepted=True\/Accepted Programmed=True\/Programmed ResolvedRefs=True/,
    );
  });

  it("says InsecureFrontendValidationMode=True/ConfigurationChanged with AllowInsecureFallback, and publishes the mode", () => {
    const result = run(
      frontend({
        default: { validation: { mode: "AllowInsecureFallback", caCertificateRefs: [ref("ca")] } },
        perPort: [{ port: 8443, tls: { validation: { caCertificateRefs: [ref("per-port-ca")] } } }],
      }),
    );
    expect(result.statuses.gateways.get("infra/gw")?.conditions).toContainEqual(
      expect.objectContaining({
        type: "InsecureFrontendValidationMode",
        status: "True",
        reason: "ConfigurationChanged",
      }),
    );
    expect(result.clientValidations.map((use) => [use.port, use.mode])).toEqual([
      [443, "AllowInsecureFallback"],
      [8443, "AllowValidOnly"],
    ]);
  });

  it("drops InsecureFrontendValidationMode from the status once no port allows insecure fallback", () => {
    const before = {
      conditions: [
        { type: "Accepted", status: "True", reason: "Accepted", message: "", lastTransitionTime: "t0" },
        {
          type: "InsecureFrontendValidationMode",
          status: "True",
          reason: "ConfigurationChanged",
          message: "",
          lastTransitionTime: "t0",
        },
        {
          type: "example.com/Foreign",
          status: "True",
          reason: "Theirs",
          message: "",
          lastTransitionTime: "t0",
        },
      ],
    };
    const result = run(frontend({ default: { validation: { caCertificateRefs: [ref("ca")] } } }));
    const desired = result.statuses.gateways.get("infra/gw");
    if (!desired) throw new Error("no Gateway status");
    const written = gatewayStatus({ status: before }, desired, "t1") as { conditions: { type: string }[] };
    expect(written.conditions.map((item) => item.type)).toEqual([
      "Accepted",
      "example.com/Foreign",
      "Programmed",
    ]);
  });
});

describe("ConfigMaps as the sync keeps them", () => {
  it("keeps only those holding ca.crt, cut down to their name and that key", () => {
    const raw = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "ca", namespace: "infra", resourceVersion: "7", annotations: { a: "b" } },
      data: { "ca.crt": authority.cert, "other.txt": "x".repeat(10_000) },
    };
    expect(holdsCaBundle(raw)).toBe(true);
    expect(holdsCaBundle({ metadata: { name: "leader" }, data: { leader: "x" } })).toBe(false);
    expect(holdsCaBundle({ metadata: { name: "empty" } })).toBe(false);
    expect(parseConfigMap(raw)).toEqual({
      ok: true,
      value: { metadata: { name: "ca", namespace: "infra" }, data: { "ca.crt": authority.cert } },
    });
  });
});

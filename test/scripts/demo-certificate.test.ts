import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { demoCertificate } from "../../scripts/demo-certificate.js";
import { tlsMaterialOf } from "../../sync/translate/tls-secrets.js";

const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);

describe("demoCertificate", () => {
  const { cert, key } = demoCertificate(["localhost", "web.localhost", "shop.localhost"], 7, NOW);
  const parsed = new X509Certificate(cert);

  it("is a self-signed X.509 certificate for the names asked, on the key it comes with", () => {
    expect(parsed.subjectAltName).toBe("DNS:localhost, DNS:web.localhost, DNS:shop.localhost");
    expect(parsed.subject).toBe("CN=localhost");
    expect(parsed.issuer).toBe(parsed.subject);
    expect(parsed.verify(parsed.publicKey)).toBe(true);
    expect(parsed.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(parsed.checkHost("shop.localhost")).toBe("shop.localhost");
    expect(parsed.checkHost("other.localhost")).toBeUndefined();
    expect(parsed.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
  });

  it("is valid from an hour before it was made for the days asked", () => {
    expect(new Date(parsed.validFrom).getTime()).toBe(NOW - 3_600_000);
    expect(new Date(parsed.validTo).getTime()).toBe(NOW + 7 * 86_400_000);
  });

  it("is read by the sync as a TLS Secret's certificate, naming its hosts", () => {
    const base64 = (text: string) => Buffer.from(text).toString("base64");
    const material = tlsMaterialOf({
      metadata: { name: "demo", namespace: "demo" },
      type: "kubernetes.io/tls",
      data: { "tls.crt": base64(cert), "tls.key": base64(key) },
    });

    expect(material.ok && material.value.names).toEqual(["localhost", "web.localhost", "shop.localhost"]);
  });

  it("makes a new key and serial number each time", () => {
    const again = demoCertificate(["localhost"], 7, NOW);

    expect(again.key).not.toBe(key);
    expect(new X509Certificate(again.cert).serialNumber).not.toBe(parsed.serialNumber);
  });
});

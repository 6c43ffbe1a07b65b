import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, GATEWAY_API, httpRouteObject, INFRA } from "../conformance/support/conformance-base.js";
import {
  ADMIN_TOKEN,
  startTlsConformance,
  type TlsConformance,
  untilTrue,
} from "../conformance/support/tls-fixture.js";
import { createTestAuthority, type TestAuthority, tlsSecret } from "../support/certificates.js";

/**
 * TLS termination end to end: Secrets on the fake API server, the live sync sealing them into Redis, the Node
 * router's HTTPS listener choosing a certificate by SNI; curl (Debian) as the client.
 */
describe("HTTPS on the Node router from certificateRefs", () => {
  let world: TlsConformance;
  let ca: TestAuthority;
  beforeAll(async () => {
    ca = createTestAuthority();
    const exact = ca.issue(["shop.example.com"]);
    const wildcard = ca.issue(["*.example.com"]);
    world = await startTlsConformance({
      label: "e2e",
      objects: [
        tlsSecret(INFRA, "shop-cert", exact),
        tlsSecret(INFRA, "wildcard-cert", wildcard),
        {
          apiVersion: GATEWAY_API,
          kind: "Gateway",
          metadata: { name: "secure", namespace: INFRA, generation: 1 },
          spec: {
            gatewayClassName: "edgeslice",
            listeners: [
              {
                name: "shop",
                port: 443,
                protocol: "HTTPS",
                hostname: "shop.example.com",
                tls: { certificateRefs: [{ name: "shop-cert" }] },
              },
              {
                name: "wildcard",
                port: 443,
                protocol: "HTTPS",
                hostname: "*.example.com",
                tls: { certificateRefs: [{ name: "wildcard-cert" }] },
              },
            ],
          },
        },
        httpRouteObject("secure-route", {
          parentRefs: [{ name: "secure" }],
          hostnames: ["shop.example.com", "*.example.com"],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("chooses the exact certificate over the wildcard by SNI, and routes the request with X-Forwarded-Proto https", async () => {
    const shop = await untilTrue(
      () => world.curl({ sni: "shop.example.com" }),
      (answer) => answer.status === 200,
    );
    expect(shop.status).toBe(200);
    expect(shop.subject).toContain("shop.example.com");
    expect(shop.body).toContain("infra-backend-v1");
    expect(shop.body.toLowerCase()).toContain('"x-forwarded-proto":"https"');
    const other = await untilTrue(
      () => world.curl({ sni: "api.example.com" }),
      (answer) => answer.status === 200,
    );
    expect(other.subject).toContain("wildcard.example.com");
  });

  it("answers 421 Misdirected Request to a Host the SNI's certificate does not cover", async () => {
    const answer = await world.curl({ sni: "shop.example.com", host: "other.test" });
    expect(answer.status).toBe(421);
    expect(answer.body).toContain("misdirected_request");
    // The wildcard's certificate covers api.example.com, so that Host on the shop connection is misdirected too.
    expect((await world.curl({ sni: "shop.example.com", host: "api.example.com" })).status).toBe(421);
    expect((await world.curl({ sni: "api.example.com", host: "www.example.com" })).status).toBe(200);
  });

  it("speaks HTTP/2 when the client offers h2 by ALPN, with the same certificate choice and 421", async () => {
    const h2 = await world.curl({ sni: "shop.example.com", http2: true });
    expect(h2.status).toBe(200);
    expect(h2.httpVersion).toBe("2");
    expect(h2.subject).toContain("shop.example.com");
    expect(h2.body).toContain("infra-backend-v1");
    const h1 = await world.curl({ sni: "shop.example.com" });
    expect(h1.httpVersion).toBe("1.1");
    const misdirected = await world.curl({ sni: "shop.example.com", host: "api.example.com", http2: true });
    expect(misdirected.httpVersion).toBe("2");
    expect(misdirected.status).toBe(421);
  });

  it("fails the handshake for a name no certificate covers", async () => {
    const metric = async (name: string) => {
      const response = await fetch(`${world.router.adminUrl}/_edgeslice/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const line = (await response.text()).split("\n").find((item) => item.startsWith(`${name} `));
      return Number(line?.split(" ")[1]);
    };
    const before = await metric("edgeslice_tls_handshake_failures_total");
    const answer = await world.curl({ sni: "nothing.test" });
    expect(answer.status).toBe(0);
    expect(await metric("edgeslice_tls_handshake_failures_total")).toBe(before + 1);
    expect(await metric("edgeslice_tls_certificates")).toBe(2);
  });

  it("serves a rotated certificate to new handshakes while requests keep succeeding", async () => {
    const before = await world.curl({ sni: "shop.example.com" });
    // Valid a day longer: its expiry date tells it from the first one.
    const renewed = ca.issue(["shop.example.com"], 3);
    let failed = 0;
    let sent = 0;
    let done = false;
    const traffic = (async () => {
      while (!done) {
        const answer = await world.curl({ sni: "shop.example.com" });
        sent++;
        if (answer.status !== 200) failed++;
      }
    })();
    world.cluster.kube.apply(tlsSecret(INFRA, "shop-cert", renewed));
    const after = await untilTrue(
      () => world.curl({ sni: "shop.example.com" }),
      (answer) => answer.expires !== before.expires,
    );
    done = true;
    await traffic;
    expect(before.status).toBe(200);
    expect(before.expires).not.toBe("");
    expect(after.expires).not.toBe(before.expires);
    expect(after.status).toBe(200);
    expect(sent).toBeGreaterThan(0);
    expect(failed).toBe(0);
  });

  it("reports a deleted Secret as ResolvedRefs=False InvalidCertificateRef and stops serving its certificate", async () => {
    world.cluster.kube.remove("Secret", INFRA, "wildcard-cert");
    const conditions = await untilTrue(
      () => world.listenerConditions("secure", "wildcard"),
      (items) => items.some((item) => item.type === "ResolvedRefs" && item.status === "False"),
    );
    expect(conditions).toContainEqual(
      expect.objectContaining({ type: "ResolvedRefs", status: "False", reason: "InvalidCertificateRef" }),
    );
    expect(conditions).toContainEqual(expect.objectContaining({ type: "Programmed", status: "False" }));
    const gone = await untilTrue(
      () => world.curl({ sni: "api.example.com" }),
      (answer) => answer.status === 0,
    );
    expect(gone.status).toBe(0);
    expect((await world.curl({ sni: "shop.example.com" })).status).toBe(200);
  });
});

import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, hostClient } from "../e2e/support/host-client.js";
import { caPolicy, configMapObject, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { startTlsChecksBackend, type TlsChecksBackend, tlsEcho } from "./support/tls-checks-backend.js";
import {
  httpsBaseObjects,
  startTlsConformance,
  type TlsConformance,
  untilTrue,
} from "./support/tls-fixture.js";

/**
 * Conformance BackendTLSPolicy: the suite's TLS backend behind four Services, each with a policy trusting a CA
 * ConfigMap. normative-test (the backend's CA, hostname abc.example.com) is Accepted and ResolvedRefs toward
 * both Gateways, and a request is answered by the backend, which saw SNI abc.example.com: over plain HTTP, and
 * re-encrypted from the HTTPS listener (SNI https-listener.org to the router). host-mismatch
 * (mismatch.example.com) and cert-mismatch (another CA) are Accepted too, and their requests fail. reconcile-test
 * follows its ConfigMap: pointed at one that does not exist it is NoValidCACertificate/InvalidCACertificateRef;
 * once created Accepted; emptied invalid again; restored Accepted.
 */
const POLICY_SERVICE = {
  "normative-test": "backendtlspolicy-test",
  "host-mismatch": "backendtlspolicy-host-mismatch-test",
  "cert-mismatch": "backendtlspolicy-cert-mismatch-test",
  "reconcile-test": "backendtlspolicy-reconcile-test",
} as const;
const RECONCILE_CM = "tls-checks-ca-certificate-reconcile-test";
const ACCEPTED = "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs";
const INVALID = "Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef";

let world: TlsConformance;
let tls: TlsChecksBackend;
let pool: Pool;

const rule = (service: string, path: string) => ({
  backendRefs: [{ name: service, port: 443 }],
  matches: [{ path: { type: "Exact", value: path } }],
});

beforeAll(async () => {
  tls = await startTlsChecksBackend();
  world = await startTlsConformance({
    label: "btls",
    objects: [
      ...httpsBaseObjects(),
      httpRouteObject("backendtlspolicy", {
        parentRefs: [{ name: "same-namespace", namespace: INFRA }],
        hostnames: ["abc.example.com"],
        rules: [
          rule(POLICY_SERVICE["normative-test"], "/backendtlspolicy"),
          rule(POLICY_SERVICE["host-mismatch"], "/backendtlspolicy-host-mismatch"),
          rule(POLICY_SERVICE["cert-mismatch"], "/backendtlspolicy-cert-mismatch"),
          rule(POLICY_SERVICE["reconcile-test"], "/backendtlspolicy-reconcile-test"),
        ],
      }),
      httpRouteObject("backendtlspolicy-reencrypt", {
        parentRefs: [{ name: "same-namespace-with-https-listener", namespace: INFRA }],
        hostnames: ["https-listener.org"],
        rules: [rule(POLICY_SERVICE["normative-test"], "/backendtlspolicy")],
      }),
      ...tls.configMaps,
      ...Object.values(POLICY_SERVICE).flatMap((service) =>
        tls.serviceObjects(service, [{ name: "btls", port: 443 }]),
      ),
      caPolicy("normative-test", POLICY_SERVICE["normative-test"], { sectionName: "btls" }),
      caPolicy("host-mismatch", POLICY_SERVICE["host-mismatch"], {
        sectionName: "btls",
        hostname: "mismatch.example.com",
      }),
      caPolicy("cert-mismatch", POLICY_SERVICE["cert-mismatch"], {
        sectionName: "btls",
        ca: "mismatch-ca-certificate",
      }),
      caPolicy("reconcile-test", POLICY_SERVICE["reconcile-test"], { sectionName: "btls" }),
    ],
  });
  pool = new Pool(world.router.url, { connections: 4 });
}, 60_000);

afterAll(async () => {
  await pool?.destroy();
  await world?.stop();
  await tls?.close();
});

const send = (path: string, host = "abc.example.com"): Promise<Answer> =>
  hostClient(pool, "").send(host, path);
const until = (path: string, done: (answer: Answer) => boolean) => untilTrue(() => send(path), done, 10_000);

/** The policy's ancestor line toward `gateway` once it reads `wanted`. */
async function ancestor(policy: string, gateway: string, wanted: string): Promise<string | undefined> {
  const line = `${gateway}: ${wanted}`;
  const lines = await untilAncestors(world.cluster.kube, policy, (found) => found.includes(line), 10_000);
  return lines.find((found) => found.startsWith(`${gateway}: `));
}

describe("conformance BackendTLSPolicy", () => {
  it("re-encrypts a request of the HTTPS listener to the backend, SNI abc.example.com", async () => {
    expect(await ancestor("normative-test", "same-namespace-with-https-listener", ACCEPTED)).toBe(
      `same-namespace-with-https-listener: ${ACCEPTED}`,
    );
    const answer = await untilTrue(
      () => world.curl({ sni: "https-listener.org", path: "/backendtlspolicy" }),
      (found) => found.status === 200,
      10_000,
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ path: "/backendtlspolicy", sni: "abc.example.com" });
  });

  it("sends an HTTP request to the Service of a valid policy over TLS: 200 from the backend", async () => {
    expect(await ancestor("normative-test", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    const answer = await until("/backendtlspolicy", (found) => found.status === 200);
    expect(answer.status).toBe(200);
    expect(tlsEcho(answer)).toMatchObject({ path: "/backendtlspolicy", sni: "abc.example.com" });
  });

  it("fails a request to the Service whose policy names another hostname than the certificate", async () => {
    expect(await ancestor("host-mismatch", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    await until("/backendtlspolicy", (found) => found.status === 200);
    const before = tls.backend.hits();
    const answer = await send("/backendtlspolicy-host-mismatch", "abc.example.org");
    // The official request's Host, abc.example.org, matches no route: any failure; ours with the route's Host too.
    expect(answer.status).not.toBe(200);
    expect((await send("/backendtlspolicy-host-mismatch")).status).toBe(502);
    expect(tls.backend.hits()).toBe(before);
  });

  it("fails a request to the Service whose policy trusts another CA", async () => {
    expect(await ancestor("cert-mismatch", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    await until("/backendtlspolicy", (found) => found.status === 200);
    const before = tls.backend.hits();
    expect((await send("/backendtlspolicy-cert-mismatch")).status).toBe(502);
    expect(tls.backend.hits()).toBe(before);
  });

  it("follows a change of the ConfigMap a policy trusts", async () => {
    const kube = world.cluster.kube;
    const path = "/backendtlspolicy-reconcile-test";
    expect(await ancestor("reconcile-test", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    expect((await until(path, (found) => found.status === 200)).status).toBe(200);

    kube.apply(
      caPolicy("reconcile-test", POLICY_SERVICE["reconcile-test"], { sectionName: "btls", ca: RECONCILE_CM }),
    );
    expect(await ancestor("reconcile-test", "same-namespace", INVALID)).toBe(`same-namespace: ${INVALID}`);
    expect((await until(path, (found) => found.status >= 500)).status).toBe(502);

    kube.apply(configMapObject(RECONCILE_CM, { "ca.crt": tls.authority.cert }));
    expect(await ancestor("reconcile-test", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    expect((await until(path, (found) => found.status === 200)).status).toBe(200);

    kube.apply(configMapObject(RECONCILE_CM, { "ca.crt": "" }));
    expect(await ancestor("reconcile-test", "same-namespace", INVALID)).toBe(`same-namespace: ${INVALID}`);
    expect((await until(path, (found) => found.status >= 500)).status).toBe(502);

    kube.apply(configMapObject(RECONCILE_CM, { "ca.crt": tls.authority.cert }));
    expect(await ancestor("reconcile-test", "same-namespace", ACCEPTED)).toBe(`same-namespace: ${ACCEPTED}`);
    expect((await until(path, (found) => found.status === 200)).status).toBe(200);
  });
});

import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { connect } from "node:net";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import {
  BACKEND_TLS_SCHEMA_VERSION,
  type BackendTlsPolicyRecord,
  clientCertificateBinding,
  type SubjectAltName,
  type Trust,
} from "../../../store/backend-tls.js";
import { sealKey } from "../../../store/certificate-seal.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import type { BackendRef } from "../../../store/routes.js";
import type { ClusterWriter } from "../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { type Answer, hostClient } from "../../e2e/support/host-client.js";
import { createTestAuthority } from "../../support/certificates.js";
import { type HttpsEcho, startHttpsEcho, type TlsEchoedRequest } from "../../support/https-echo.js";
import { capturingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

/**
 * TLS to pods on the Node router (BackendTLSPolicy, issue 37): the built router over real Redis, the
 * records as the sync writes them (a service port with protocol https naming its policy, the policy's
 * validation in the cluster's backend-tls hash), and loopback HTTPS backends whose certificates come from a CA
 * made at test time: one right, one for another name, one from a CA the policy does not trust.
 */
const HOST = "abc.example.com";
const SPIFFE = "spiffe://abc.example.com/test-identity";
const authority = createTestAuthority("backend test CA");
const stranger = createTestAuthority("unknown test CA");
const STORE_KEY = randomBytes(32);
/** The backend client certificate of Gateway infra/with-client (Gateway.spec.tls.backend). */
const clientCertificate = authority.issue(["gateway.example.com"]);

function policy(id: string, options: { trust?: Trust; subjectAltNames?: SubjectAltName[] } = {}) {
  const trust = options.trust ?? { pem: authority.cert };
  const subjectAltNames = options.subjectAltNames ?? [];
  const version = createHash("sha256")
    .update(JSON.stringify([HOST, subjectAltNames, trust]))
    .digest("hex");
  const record: BackendTlsPolicyRecord = {
    v: BACKEND_TLS_SCHEMA_VERSION,
    kind: "policy",
    id,
    version,
    hostname: HOST,
    subjectAltNames,
    trust,
  };
  return record;
}

describe("TLS from the Node router to backends with a BackendTLSPolicy", () => {
  const prefix = uniquePrefix("https-backends");
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const { logger, lines } = capturingLogger();
  let writer: ClusterWriter;
  let router: NodeRouter;
  let pool: Pool;
  let good: HttpsEcho;
  let wrongName: HttpsEcho;
  let unknownCa: HttpsEcho;
  let mirror: HttpsEcho;
  let withdrawn: HttpsEcho;
  let mutual: HttpsEcho;
  const backends: HttpsEcho[] = [];

  /** Service infra/<name> whose port 443 has policy infra/<policy>, its endpoints `at`. */
  const service = (name: string, tlsPolicy: string | undefined, ...at: HttpsEcho[]) =>
    writer.putService(
      serviceRecordV2({
        cluster: "east",
        service: `infra/${name}`,
        ports: [
          {
            number: 443,
            ipv4: at.map((backend) => endpoint(backend.ip, backend.port)),
            ...(tlsPolicy ? { tlsPolicy: `infra/${tlsPolicy}` } : {}),
          },
        ],
      }),
    );
  const to = (name: string): BackendRef => ({ service: `infra/${name}`, port: 443, weight: 1 });
  const exact = (path: string) => [{ path: { type: "Exact" as const, value: path }, headers: [] }];
  const send = (path: string): Promise<Answer> => hostClient(pool, "").send(HOST, path);
  const echoOf = (answer: Answer) => answer.echo as unknown as TlsEchoedRequest | undefined;
  const until = async (path: string, done: (answer: Answer) => boolean) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const answer = await send(path);
      if (done(answer) || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  beforeAll(async () => {
    good = await startHttpsEcho("good", authority.issue([HOST, SPIFFE]));
    wrongName = await startHttpsEcho("wrong-name", authority.issue(["other.example.com"]));
    unknownCa = await startHttpsEcho("unknown-ca", stranger.issue([HOST]));
    mirror = await startHttpsEcho("mirror", authority.issue([HOST]));
    withdrawn = await startHttpsEcho("withdrawn", authority.issue([HOST]));
    mutual = await startHttpsEcho("mutual", authority.issue([HOST]), { clientCa: authority.cert });
    backends.push(good, wrongName, unknownCa, mirror, withdrawn, mutual);
    writer = createRedisWriter(redis, { prefix, cluster: "east" });
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    for (const record of [
      policy("infra/trusted"),
      policy("infra/withdrawn"),
      policy("infra/system-roots", { trust: { system: true } }),
      policy("infra/uri-san", { subjectAltNames: [{ type: "URI", uri: SPIFFE }] }),
      policy("infra/uri-san-mismatch", {
        subjectAltNames: [
          { type: "URI", uri: "spiffe://def.example.com/test-identity" },
          { type: "Hostname", hostname: "def.example.com" },
        ],
      }),
    ]) {
      await writer.backendTls?.putBackendTls(record);
    }
    await service("good", "trusted", good);
    await service("wrong-name", "trusted", wrongName);
    await service("unknown-ca", "trusted", unknownCa);
    await service("no-record", "absent", good);
    await service("system-roots", "system-roots", good);
    await service("uri-san", "uri-san", good);
    await service("uri-san-mismatch", "uri-san-mismatch", good);
    await service("unknown-then-good", "trusted", unknownCa, good);
    await service("mirror", "trusted", mirror);
    await service("withdrawn", "withdrawn", withdrawn);
    await service("mutual", "trusted", mutual);
    await writer.backendTls?.putBackendTls({
      v: BACKEND_TLS_SCHEMA_VERSION,
      kind: "client",
      id: "infra/with-client",
      version: createHash("sha256").update(clientCertificate.cert).digest("hex"),
      cert: clientCertificate.cert,
      key: sealKey(STORE_KEY, clientCertificateBinding("east", "infra/with-client"), clientCertificate.key),
    });
    // The same Service through a Gateway with a backend client certificate, and through one without.
    for (const gateway of ["with-client", "without-client"]) {
      await writer.putRoute({
        ...routeRecord(`httproute:infra/${gateway}`, {
          hostnames: [`${gateway}.example.com`],
          rules: [routeRule([to("mutual")])],
        }),
        listeners: [{ gateway: `infra/${gateway}`, port: 80, hostnames: [] }],
      });
    }
    const paths = [
      "good",
      "wrong-name",
      "unknown-ca",
      "no-record",
      "system-roots",
      "uri-san",
      "uri-san-mismatch",
      "unknown-then-good",
      "withdrawn",
    ];
    await writer.putRoute(
      routeRecord("httproute:infra/btls", {
        hostnames: [HOST],
        rules: [
          ...paths.map((name) => routeRule([to(name)], { matches: exact(`/${name}`) })),
          routeRule([to("good")], {
            matches: exact("/mirrored"),
            filters: { mirrors: [{ service: "infra/mirror", port: 443, percent: 100 }] },
          }),
        ],
      }),
    );
    const config = parseRouterConfig({
      REDIS_URL,
      PORT: "0",
      EDGESLICE_PREFIX: prefix,
      LOG_LEVEL: "error",
      UPSTREAM_TRY_TIMEOUT_MS: "5000",
      TLS_STORE_KEY: STORE_KEY.toString("base64"),
    });
    router = await startNodeRouter(config, {
      host: "127.0.0.1",
      logger,
      refreshIntervalMs: 100,
      drainMs: 200,
    });
    pool = new Pool(router.url, { connections: 4 });
    await until("/good", (answer) => answer.status === 200);
  }, 30_000);

  afterAll(async () => {
    await pool?.destroy();
    await router?.close();
    await Promise.all(backends.map((backend) => backend.close()));
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it("sends the request over TLS with the policy's hostname as SNI, verified against its CA", async () => {
    const answer = await send("/good");
    expect(answer.status).toBe(200);
    expect(echoOf(answer)).toMatchObject({
      backend: "good",
      path: "/good",
      sni: HOST,
      clientCertificate: "",
    });
  });

  it("refuses a backend whose certificate names another host: 502, and no request reaches it", async () => {
    const answer = await send("/wrong-name");
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "bad_gateway" });
    expect(wrongName.hits()).toBe(0);
  });

  it("refuses a backend whose certificate comes from a CA the policy does not trust: 502, no request sent", async () => {
    const answer = await send("/unknown-ca");
    expect(answer.status).toBe(502);
    expect(unknownCa.hits()).toBe(0);
  });

  it("refuses the backends of a policy without a usable record rather than sending in cleartext", async () => {
    expect((await send("/no-record")).status).toBe(502);
  });

  it("validates against the system's roots for WellKnownCACertificates System: a private CA is refused", async () => {
    expect((await send("/system-roots")).status).toBe(502);
  });

  it("accepts a certificate carrying the policy's URI subjectAltName and refuses one carrying none of them", async () => {
    const matching = await send("/uri-san");
    expect(matching.status).toBe(200);
    expect(echoOf(matching)?.sni).toBe(HOST);
    expect((await send("/uri-san-mismatch")).status).toBe(502);
  });

  it("tries another backend after one whose validation failed (connect-failure class)", async () => {
    for (let round = 0; round < 4; round++) {
      const answer = await send("/unknown-then-good");
      expect(answer.status).toBe(200);
      expect(echoOf(answer)?.backend).toBe("good");
    }
  });

  it("logs a refused backend once per backend and reason, not per request", async () => {
    for (let round = 0; round < 5; round++) await send("/wrong-name");
    const refusals = lines.filter(
      (line) =>
        line.msg === "backend refused: TLS to it failed" &&
        line.backend === `127.0.0.1:${wrongName.port}` &&
        line.policy === "infra/trusted",
    );
    expect(refusals.map((line) => line.reason)).toEqual(["ERR_TLS_CERT_ALTNAME_INVALID"]);
  });

  it("reuses a validated connection, and never one validated under a policy since changed", async () => {
    await send("/good");
    const before = good.handshakes();
    await send("/good");
    await send("/good");
    expect(good.handshakes()).toBe(before);
    // The same CA in a bundle with another one: a new version of the policy.
    await writer.backendTls?.putBackendTls(
      policy("infra/trusted", { trust: { pem: `${authority.cert}${stranger.cert}` } }),
    );
    await until("/good", () => good.handshakes() > before);
    expect(good.handshakes()).toBe(before + 1);
  });

  it("carries a WebSocket upgrade over the same TLS setup", async () => {
    const seen = await new Promise<string>((resolve, reject) => {
      const socket = connect(router.port, "127.0.0.1");
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString("latin1");
        if (text.includes("ping\n")) {
          socket.destroy();
          resolve(text);
        } else if (text.includes("sni=")) socket.write("ping\n");
      });
      socket.on("error", reject);
      socket.write(
        `GET /good HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
    });
    expect(seen).toMatch(/^HTTP\/1\.1 101 /);
    expect(seen).toContain(`good sni=${HOST}\n`);
  });

  it("sends a mirror's copy to a port with a BackendTLSPolicy over TLS", async () => {
    const before = mirror.hits();
    expect((await send("/mirrored")).status).toBe(200);
    const deadline = Date.now() + 5_000;
    while (mirror.hits() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(mirror.hits()).toBe(before + 1);
  });

  it("refuses the pods of a withdrawn policy and closes the connections validated under it", async () => {
    expect((await send("/withdrawn")).status).toBe(200);
    expect(withdrawn.openConnections()).toBe(1);
    await writer.backendTls?.removeBackendTls("policy:infra/withdrawn");
    const refused = await until("/withdrawn", (answer) => answer.status !== 200);
    expect(refused.status).toBe(502);
    // Well within the 4 s keep-alive timeout that would close it anyway.
    const deadline = Date.now() + 1_000;
    while (withdrawn.openConnections() > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(withdrawn.openConnections()).toBe(0);
  });

  it("presents the backend client certificate of the route's Gateway to a pod that asks for one", async () => {
    const answer = await hostClient(pool, "").send("with-client.example.com", "/");
    expect(answer.status).toBe(200);
    expect(echoOf(answer)?.clientCertificate).toBe(
      new X509Certificate(clientCertificate.cert).fingerprint256,
    );
  });

  it("presents none for a Gateway without one: the pod that asks for one refuses the handshake, 502", async () => {
    const answer = await hostClient(pool, "").send("without-client.example.com", "/");
    expect(answer.status).toBe(502);
  });
});

import { createHash, randomBytes } from "node:crypto";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { sealBinding, sealKey } from "../../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../../store/certificates.js";
import {
  CLIENT_VALIDATION_SCHEMA_VERSION,
  type ClientValidationMode,
  type ClientValidationRecord,
  clientValidationId,
} from "../../../store/client-validations.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { RouteRecord } from "../../../store/routes.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { createTestAuthority, type TestCertificate } from "../../support/certificates.js";
import { eventually } from "../../support/eventually.js";

/**
 * Frontend client certificate validation on the Node router: client validation records in a MemoryStore (as the
 * sync publishes them per Gateway and port), Node's TLS client with and without certificates of two
 * authorities. A port's validation decides the handshake; the listener port a TLS port stands for reaches
 * routing.
 */
const STORE_KEY = randomBytes(32);
const serverCa = createTestAuthority("server CA");
const clientCa = createTestAuthority("client CA");
const perPortCa = createTestAuthority("per-port client CA");
const server = serverCa.issue(["example.org", "second-example.org"]);
const client = clientCa.issue(["client.example"]);
const perPortClient = perPortCa.issue(["per-port-client.example"]);

const validation = (
  gateway: string,
  port: number,
  mode: ClientValidationMode,
  ca: string,
  hostnames: string[],
): ClientValidationRecord => ({
  v: CLIENT_VALIDATION_SCHEMA_VERSION,
  id: clientValidationId(gateway, port),
  gateway,
  port,
  hostnames,
  ...(hostnames.length === 0 ? { anyHost: true } : {}),
  mode,
  ca,
  version: createHash("sha256").update(ca).digest("hex"),
});

/** What a TLS client saw: the HTTP status line it got, or the error code that ended the connection. */
function request(
  port: number,
  servername: string,
  certificate?: TestCertificate,
  host = servername,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      servername,
      ca: serverCa.cert,
      ...(certificate ? { cert: certificate.cert, key: certificate.key } : {}),
    });
    let text = "";
    const done = (result: string) => {
      socket.destroy();
      resolve(result);
    };
    socket.once("secureConnect", () =>
      socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) done(`${text.split("\r\n")[0]} ${text.slice(end + 4)}`.trim());
    });
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.once("close", () => done(text === "" ? "closed" : text));
  });
}

describe("client certificate validation on the Node router's TLS ports", () => {
  const store = new MemoryStore();
  const writer = store.writer("east");
  let router: NodeRouter;
  let backend: Server;
  const ports = new Map<number, number>();

  beforeAll(async () => {
    backend = createHttpServer((req, res) => res.end(`echo ${req.headers.host}`));
    await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
    await writer.putService(
      serviceRecordV2({
        cluster: "east",
        service: "infra/echo",
        ports: [{ number: 80, ipv4: [endpoint("127.0.0.1", (backend.address() as AddressInfo).port)] }],
      }),
    );
    const route: RouteRecord = {
      ...routeRecord("httproute:infra/second", {
        hostnames: ["second-example.org"],
        rules: [routeRule([{ service: "infra/echo", port: 80, weight: 1 }])],
      }),
      listeners: [
        {
          gateway: "infra/gw",
          port: 8443,
          listenerHostname: "second-example.org",
          hostnames: ["second-example.org"],
        },
      ],
    };
    await writer.putRoute(route);
    await writer.certificates?.putCertificate({
      v: CERTIFICATE_SCHEMA_VERSION,
      id: "infra/server",
      hostnames: ["example.org", "second-example.org"],
      anyHost: true,
      version: "a".repeat(64),
      cert: server.cert,
      key: sealKey(STORE_KEY, sealBinding("east", "infra/server"), server.key),
    });
    const certificates = writer.certificates;
    await certificates?.putClientValidation(validation("infra/gw", 443, "AllowValidOnly", clientCa.cert, []));
    await certificates?.putClientValidation(
      validation("infra/gw", 8443, "AllowValidOnly", perPortCa.cert, ["second-example.org"]),
    );
    await certificates?.putClientValidation(
      validation("infra/gw", 9443, "AllowInsecureFallback", clientCa.cert, []),
    );
    await certificates?.putClientValidation(
      validation("infra/elsewhere", 7443, "AllowValidOnly", clientCa.cert, []),
    );
    await writer.heartbeat({ holder: "test", leaseMs: 600_000, at: Date.now() });
    const config = parseRouterConfig({
      PORT: "0",
      LOG_LEVEL: "error",
      TLS_STORE_KEY: STORE_KEY.toString("base64"),
      HTTPS_LISTENER_PORTS: "8443=0,9443=0,7443=0",
      GATEWAYS: "infra/gw",
    });
    router = await startNodeRouter(config, {
      source: store,
      certificates: store,
      host: "127.0.0.1",
      logger: silentLogger,
    });
    for (const item of router.https?.ports ?? []) ports.set(item.listenerPort, item.port);
    await router.https?.certificates.refresh();
  }, 30_000);

  afterAll(async () => {
    await router?.close();
    await new Promise<void>((resolve) => backend?.close(() => resolve()));
  });

  const on = (listenerPort: number) => ports.get(listenerPort) ?? 0;

  it("lets in a client whose certificate the port's CA issued, and no other (AllowValidOnly)", async () => {
    expect(await request(on(443), "example.org", client)).toMatch(/^HTTP\/1\.1 404 /);
    expect(["ECONNRESET", "closed"]).toContain(await request(on(443), "example.org", perPortClient));
  });

  it("ends the handshake of a client that sends no certificate with the certificate_required alert", async () => {
    expect(await request(on(443), "example.org")).toBe("ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED");
  });

  it("checks against the perPort CA on its own port, and routes by the listener port the router port stands for", async () => {
    expect(await request(on(8443), "second-example.org", perPortClient)).toBe(
      "HTTP/1.1 200 OK echo second-example.org",
    );
    expect(["ECONNRESET", "closed"]).toContain(await request(on(8443), "second-example.org", client));
  });

  it("lets every client in with AllowInsecureFallback, certificate or not", async () => {
    expect(await request(on(9443), "example.org")).toMatch(/^HTTP\/1\.1 404 /);
    expect(await request(on(9443), "example.org", perPortClient)).toMatch(/^HTTP\/1\.1 404 /);
    expect(await request(on(9443), "example.org", client)).toMatch(/^HTTP\/1\.1 404 /);
  });

  it("asks nothing where no Gateway it serves validates (another Gateway's validation is not its)", async () => {
    expect(await request(on(7443), "example.org")).toMatch(/^HTTP\/1\.1 404 /);
  });

  it("takes a rotated CA bundle for new handshakes without a restart", async () => {
    await writer.certificates?.putClientValidation(
      validation("infra/gw", 443, "AllowValidOnly", perPortCa.cert, []),
    );
    await eventually(
      async () => (await request(on(443), "example.org", perPortClient)).startsWith("HTTP/1.1 404"),
      5_000,
      "the rotated CA to let the per-port client in on 443",
    );
    expect(["ECONNRESET", "closed"]).toContain(await request(on(443), "example.org", client));
  });
});

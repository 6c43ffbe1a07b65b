import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { sealBinding, sealKey } from "../../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../../store/certificates.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { BackendRef, RouteListener, RouteRecord } from "../../../store/routes.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { createTestAuthority } from "../../support/certificates.js";
import { eventually } from "../../support/eventually.js";
import { dialTls, startTlsBackend, type TlsBackend } from "../../support/tls-backend.js";

/**
 * TLS passthrough on the Node router (TLSRoute): records in a MemoryStore, loopback backends that end TLS
 * themselves, Node's TLS client. What the client sees is the backend's certificate and greeting, never the
 * router's; a connection no backend takes is closed; a name nobody serves gets the unrecognized_name alert.
 */
const STORE_KEY = randomBytes(32);
const ADMIN_TOKEN = "passthrough-admin";
const ca = createTestAuthority("passthrough test CA");
const backendCertificate = ca.issue(["*.example.com", "broker.example.org"]);
const routerCertificate = ca.issue(["www.example.net"]);

/** A listener of Gateway infra/gw, or of `gateway`: listener isolation holds among one Gateway's listeners. */
const on = (port: number, listenerHostname?: string, gateway = "infra/gw"): RouteListener => ({
  gateway,
  port,
  ...(listenerHostname ? { listenerHostname } : {}),
  hostnames: [],
});

function tlsRoute(
  name: string,
  hostnames: string[],
  backends: BackendRef[],
  listeners: RouteListener[],
): RouteRecord {
  return { ...routeRecord(`tlsroute:infra/${name}`, { hostnames, rules: [routeRule(backends)] }), listeners };
}

/** The listener without hostname of another Gateway, infra/other. */
const other = (port: number) => on(port, undefined, "infra/other");
const to = (service: string, weight = 1): BackendRef => ({ service: `infra/${service}`, port: 443, weight });

describe("TLS passthrough on the Node router", () => {
  const store = new MemoryStore();
  const writer = store.writer("east");
  let router: NodeRouter;
  let alpha: TlsBackend;
  let beta: TlsBackend;
  let httpsPort: number;
  let mqttPort: number;
  let plainPort: number;
  let deadPort: number;

  beforeAll(async () => {
    alpha = await startTlsBackend("alpha", backendCertificate);
    beta = await startTlsBackend("beta", backendCertificate);
    // A port nothing listens on: a backend whose connect is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    deadPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const service = (name: string, ports: number[]) =>
      writer.putService(
        serviceRecordV2({
          cluster: "east",
          service: `infra/${name}`,
          ports: [{ number: 443, ipv4: ports.map((port) => endpoint("127.0.0.1", port)) }],
        }),
      );
    await service("alpha", [alpha.port]);
    await service("beta", [beta.port]);
    await service("flaky", [deadPort, alpha.port]);
    await service("empty", []);
    await writer.putRoute(tlsRoute("abc", ["abc.example.com"], [to("alpha")], [on(443, "*.example.com")]));
    await writer.putRoute(tlsRoute("wild", ["*.example.com"], [to("beta")], [on(443, "*.example.com")]));
    await writer.putRoute(
      tlsRoute(
        "half",
        ["half.example.com"],
        [to("alpha"), { invalid: "InvalidKind: x", weight: 1 }],
        [other(443)],
      ),
    );
    await writer.putRoute(tlsRoute("flaky", ["flaky.example.com"], [to("flaky")], [other(443)]));
    await writer.putRoute(tlsRoute("empty", ["empty.example.com"], [to("empty")], [other(443)]));
    await writer.putRoute(tlsRoute("broker", ["broker.example.org"], [to("alpha")], [on(8883)]));
    await writer.certificates?.putCertificate({
      v: CERTIFICATE_SCHEMA_VERSION,
      id: "infra/www",
      hostnames: ["www.example.net"],
      version: "a".repeat(64),
      cert: routerCertificate.cert,
      key: sealKey(STORE_KEY, sealBinding("east", "infra/www"), routerCertificate.key),
    });
    await writer.heartbeat({ holder: "test", leaseMs: 600_000, at: Date.now() });

    const config = parseRouterConfig({
      PORT: "0",
      LOG_LEVEL: "error",
      TLS_STORE_KEY: STORE_KEY.toString("base64"),
      HTTPS_LISTENER_PORTS: "8883=0,9443=0",
      ADMIN_TOKEN,
    });
    router = await startNodeRouter(config, {
      source: store,
      certificates: store,
      host: "127.0.0.1",
      logger: silentLogger,
      drainMs: 100,
    });
    const ports = router.https?.ports ?? [];
    httpsPort = ports.find((item) => item.listenerPort === 443)?.port ?? 0;
    mqttPort = ports.find((item) => item.listenerPort === 8883)?.port ?? 0;
    plainPort = ports.find((item) => item.listenerPort === 9443)?.port ?? 0;
    await router.https?.certificates.refresh();
  }, 30_000);

  afterAll(async () => {
    await router?.close();
    await alpha?.close();
    await beta?.close();
  });

  it("relays the connection to the backend of the route that claims its server name, which ends the TLS", async () => {
    const exact = await dialTls(httpsPort, "abc.example.com", { ca: ca.cert });
    expect(exact).toEqual({
      greeting: "alpha sni=abc.example.com",
      names: "DNS:*.example.com, DNS:broker.example.org",
      echo: "ping",
    });
    const wild = await dialTls(httpsPort, "other.example.com", { ca: ca.cert });
    expect(wild.greeting).toBe("beta sni=other.example.com");
  });

  it("serves TLSRoutes on another Gateway listener port only on its own router port (HTTPS_LISTENER_PORTS)", async () => {
    expect((await dialTls(mqttPort, "broker.example.org", { ca: ca.cert })).greeting).toBe(
      "alpha sni=broker.example.org",
    );
    // Port 443 has TLS listeners of its own: a name none of its routes claims is refused there, not alerted.
    expect((await dialTls(httpsPort, "broker.example.org", { ca: ca.cert })).greeting).toBeUndefined();
  });

  it("ends TLS itself for a name one of its certificates serves, on the same port", async () => {
    const dial = await dialTls(httpsPort, "www.example.net", { ca: ca.cert, handshakeOnly: true });
    expect(dial).toEqual({ names: "DNS:www.example.net" });
    const curl = await curlStatus(httpsPort, "www.example.net");
    expect(curl).toMatch(/^404 /);
  });

  it("refuses the share of an invalid backendRef, and relays the rest (TLSRouteRule.backendRefs weights)", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () => dialTls(httpsPort, "half.example.com", { ca: ca.cert })),
    );
    const relayed = outcomes.filter((dial) => dial.greeting === "alpha sni=half.example.com").length;
    const refused = outcomes.filter((dial) => dial.error !== undefined).length;
    expect(relayed + refused).toBe(30);
    expect(relayed).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it("tries another backend when a connect is refused", async () => {
    for (let i = 0; i < 8; i++) {
      expect((await dialTls(httpsPort, "flaky.example.com", { ca: ca.cert })).greeting).toBe(
        "alpha sni=flaky.example.com",
      );
    }
  });

  it("closes the connection when the route's Service has no endpoint", async () => {
    const dial = await dialTls(httpsPort, "empty.example.com", { ca: ca.cert });
    expect(["ECONNRESET", "closed"]).toContain(dial.error);
  });

  it("answers a name nobody serves, on a port without TLSRoutes, with the unrecognized_name alert", async () => {
    expect((await dialTls(plainPort, "unknown.example.net", { ca: ca.cert })).error).toBe(
      "ERR_SSL_TLSV1_UNRECOGNIZED_NAME",
    );
    // What curl shows: a TLS error naming the cause, not SSL_ERROR_SYSCALL.
    expect(await curlStatus(plainPort, "unknown.example.net")).toMatch(/unrecognized name/i);
    // Where TLSRoutes are served, a name none of them claims is refused as the Gateway API asks: closed.
    expect(["ECONNRESET", "closed"]).toContain((await dialTls(mqttPort, "unknown.example.net")).error);
  });

  it("counts the connections it relayed and refused", async () => {
    await eventually(
      async () => {
        const text = await (
          await fetch(`${router.adminUrl}/_edgeslice/metrics`, {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          })
        ).text();
        return (
          /edgeslice_tls_passthrough_connections_total\{outcome="relayed"\} [1-9]/.test(text) &&
          /edgeslice_tls_passthrough_connections_total\{outcome="refused"\} [1-9]/.test(text)
        );
      },
      5_000,
      "relayed and refused passthrough connections counted",
    );
  });

  it("cuts relayed connections on close once its drain bound is over", async () => {
    const { connect } = await import("node:tls");
    const socket = connect({
      host: "127.0.0.1",
      port: httpsPort,
      servername: "abc.example.com",
      ca: ca.cert,
    });
    await new Promise<void>((resolve) => socket.once("data", () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    await router.close();
    await closed;
  });
});

/** curl's status line for https://name:port/ (or its error line), never throwing. */
function curlStatus(port: number, name: string): Promise<string> {
  const args = ["-k", "-sS", "--max-time", "5", "--resolve", `${name}:${port}:127.0.0.1`, "-o", "/dev/null"];
  args.push("-w", "%{http_code} ok", `https://${name}:${port}/`);
  return new Promise((resolve) => {
    execFile("/usr/bin/curl", args, { encoding: "utf8" }, (_error, stdout, stderr) => {
      resolve(stdout.startsWith("000") ? stderr.trim() : stdout.trim());
    });
  });
}

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer, type TLSSocket, type Server as TlsServer } from "node:tls";
import { listenOn } from "../../../lib/listen.js";
import type { Logger } from "../../../lib/logger.js";
import type { MetricFamily } from "../../../lib/prometheus.js";
import type { CertificateReader } from "../../../store/certificates.js";
import { endpointAddress } from "../../../store/records.js";
import type { ClusterGrants } from "../../core/cluster-grants.js";
import { type ConnectionStage, withConnectionStage } from "../proxy-header-stage.js";
import { type CertificateSource, createCertificateSource } from "./certificate-source.js";
import { type CertificateTable, selectCertificate, type TableCertificate } from "./certificate-table.js";

/** HTTP/2 to clients (functions/node/http2/): takes a TLS socket whose ALPN chose h2. */
export interface Http2Front {
  accept(socket: TLSSocket): void;
  close(): Promise<void>;
}

export interface HttpsListenerOptions {
  readonly reader: CertificateReader;
  readonly storeKey: Uint8Array;
  /** The router's HTTP/1.1 server: TLS sockets that chose http/1.1 are handed to it as connections. */
  readonly httpServer: Server;
  /** When given, ALPN offers h2 first and h2 connections go to it. */
  readonly http2Front?: Http2Front | undefined;
  readonly port: number;
  readonly host: string;
  readonly logger: Logger;
  readonly refreshIntervalMs?: number;
  /** The first certificate read waits for it (the store's connection). */
  readonly storeReady?: Promise<unknown> | undefined;
  /** A client that has not finished its handshake by then is cut (Node's default is 120 s). */
  readonly handshakeTimeoutMs?: number;
  /** CLUSTER_GRANTS: a certificate serves only names its cluster was granted (certificate-table.ts). */
  readonly grants?: ClusterGrants | undefined;
  /** ROUTER_CLUSTER. */
  readonly ownCluster?: string | undefined;
  /** Runs on each TCP connection before TLS reads it (PROXY_PROTOCOL: node/proxy-header-stage.ts). */
  readonly connectionStage?: ConnectionStage | undefined;
}

export interface HttpsListener {
  /** `https://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly server: TlsServer;
  readonly certificates: CertificateSource;
  /** Handshakes that failed (no certificate for the SNI, a client that gave up, a bad hello). */
  handshakeFailures(): number;
  /** For the metrics endpoint: failed handshakes and the certificates served. */
  families(): MetricFamily[];
  /** The certificate a handshake for `name` gets now (the routing core's 421 rule compares them). */
  certificateOf(name: string): TableCertificate | undefined;
  /** Stops accepting; connections already handed over are the HTTP servers' to drain. */
  close(): Promise<void>;
}

/**
 * The HTTPS listener: a `tls.Server` whose certificate is chosen per handshake by SNI from the certificate
 * records (certificate-source.ts), and whose secure connections are dispatched by ALPN: `h2` to the HTTP/2
 * front when there is one, `http/1.1` (or none) to the router's own HTTP/1.1 server, so HTTP/1.1 over TLS keeps
 * the direct path, upgrades and every rule of the cleartext port. X-Forwarded-Proto follows from the socket.
 */
export async function startHttpsListener(options: HttpsListenerOptions): Promise<HttpsListener> {
  const { logger, httpServer, http2Front } = options;
  let server: TlsServer | undefined;
  let withoutSni: TableCertificate | undefined;
  const certificates = createCertificateSource({
    reader: options.reader,
    storeKey: options.storeKey,
    logger,
    grants: options.grants,
    ownCluster: options.ownCluster,
    onTable: (table) => {
      withoutSni = defaultContextOf(server, certificates, table, withoutSni);
    },
    ...(options.refreshIntervalMs === undefined ? {} : { intervalMs: options.refreshIntervalMs }),
  });
  let failures = 0;
  server = createServer({
    ALPNProtocols: http2Front ? ["h2", "http/1.1"] : ["http/1.1"],
    handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
    SNICallback: (servername, callback) => {
      const chosen = selectCertificate(certificates.table(), servername);
      const context = chosen && certificates.context(chosen);
      if (context) callback(null, context);
      else callback(new Error(`no certificate for ${JSON.stringify(servername.slice(0, 253))}`));
    },
  });
  certificates.start(options.storeReady);
  server.on("secureConnection", (socket: TLSSocket) => {
    if (socket.alpnProtocol === "h2" && http2Front) http2Front.accept(socket);
    else httpServer.emit("connection", socket);
  });
  server.on("tlsClientError", (error) => {
    failures++;
    logger.debug("TLS handshake failed", { error: error.message });
  });
  if (options.connectionStage) withConnectionStage(server, options.connectionStage);
  try {
    await listenOn(server, { port: options.port, host: options.host }, { port: "HTTPS_PORT", host: "HOST" });
  } catch (error) {
    certificates.close();
    throw error;
  }
  const listening = server;
  const port = (listening.address() as AddressInfo).port;
  return {
    url: `https://${endpointAddress({ ip: options.host, port })}`,
    port,
    server: listening,
    certificates,
    handshakeFailures: () => failures,
    families: () => [
      {
        name: "edgeslice_tls_handshake_failures_total",
        type: "counter",
        help: "TLS handshakes on HTTPS_PORT that failed: no certificate for the SNI, a bad hello, a client that gave up.",
        samples: [{ value: failures }],
      },
      {
        name: "edgeslice_tls_certificates",
        type: "gauge",
        help: "Certificates the HTTPS listener serves (certificate records that decoded, opened and loaded).",
        samples: [{ value: certificates.table().size }],
      },
    ],
    certificateOf: (name) => selectCertificate(certificates.table(), name),
    close() {
      certificates.close();
      return new Promise<void>((resolve) => listening.close(() => resolve()));
    },
  };
}

/**
 * Points the server's default context, which a client without SNI gets (Node calls SNICallback only for a
 * client that sent a name), at the certificate such a client is given (certificate-table.ts), when it changed;
 * returns it. Without one the default context has no certificate, and such handshakes fail.
 */
function defaultContextOf(
  server: TlsServer | undefined,
  certificates: CertificateSource,
  table: CertificateTable,
  before: TableCertificate | undefined,
): TableCertificate | undefined {
  const chosen = selectCertificate(table, undefined);
  const same =
    chosen?.cluster === before?.cluster && chosen?.id === before?.id && chosen?.version === before?.version;
  if (!server || same) return before;
  const pair = chosen && certificates.pair(chosen);
  server.setSecureContext(pair ? { cert: pair.cert, key: pair.key } : {});
  return chosen;
}

/**
 * The router's HTTPS listener when TLS_STORE_KEY is set; without it, none, and the log says why once (the
 * certificate records' keys cannot be opened without it).
 */
export async function startRouterHttps(
  settings: {
    readonly httpsPort?: number | undefined;
    readonly tlsStoreKey?: Uint8Array | undefined;
    readonly clusterGrants?: ClusterGrants | undefined;
    readonly cluster?: string | undefined;
  },
  options: Omit<HttpsListenerOptions, "storeKey" | "port" | "reader" | "grants" | "ownCluster"> & {
    reader: CertificateReader | undefined;
  },
): Promise<HttpsListener | undefined> {
  if (settings.tlsStoreKey === undefined || options.reader === undefined) {
    options.logger.info(
      settings.tlsStoreKey === undefined
        ? "TLS_STORE_KEY is not set: no HTTPS listener (set it, as on the syncs, to serve HTTPS_PORT)"
        : "no store to read certificates from: no HTTPS listener",
    );
    return undefined;
  }
  const listener = await startHttpsListener({
    ...options,
    reader: options.reader,
    storeKey: settings.tlsStoreKey,
    port: settings.httpsPort ?? 8443,
    grants: settings.clusterGrants,
    ownCluster: settings.cluster,
  });
  options.logger.info("router listening for HTTPS", {
    url: listener.url,
    http2: options.http2Front !== undefined,
  });
  return listener;
}

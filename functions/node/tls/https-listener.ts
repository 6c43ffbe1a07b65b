import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Server as TlsServer } from "node:tls";
import type { Logger } from "../../../lib/logger.js";
import type { MetricFamily } from "../../../lib/prometheus.js";
import type { CertificateReader } from "../../../store/certificates.js";
import { endpointAddress } from "../../../store/records.js";
import type { Routing } from "../../core/routing.js";
import { UNRECOGNIZED_NAME_ALERT } from "../../core/tls/client-hello.js";
import { type TlsPort, tlsPorts } from "../../core/tls/tls-ports.js";
import type { ClusterGrants } from "../../core/trust/cluster-grants.js";
import type { ConnectionStage } from "../proxy-header-stage.js";
import { endThenDestroy } from "../tunnel.js";
import {
  type CertificateSource,
  certificateExpiryFamily,
  createCertificateSource,
} from "./certificate-source.js";
import { selectCertificate, type TableCertificate } from "./certificate-table.js";
import { ClientValidationSource } from "./client-validation-source.js";
import { validationFor } from "./client-validation-table.js";
import { PassthroughRelay } from "./passthrough.js";
import { startTlsFront, type TlsConnection, type TlsFront } from "./tls-front.js";
import { type Http2Front, TlsTermination } from "./tls-termination.js";

export type { Http2Front } from "./tls-termination.js";

export interface HttpsListenerOptions {
  readonly reader: CertificateReader;
  readonly storeKey: Uint8Array;
  /** The router's HTTP/1.1 server: TLS sockets that chose http/1.1 are handed to it as connections. */
  readonly httpServer: Server;
  /** When given, ALPN offers h2 first and h2 connections go to it. */
  readonly http2Front?: Http2Front | undefined;
  readonly port: number;
  /** HTTPS_LISTENER_PORTS: more ports, each serving one Gateway listener port (`port` serves 443). */
  readonly listenerPorts?: readonly TlsPort[] | undefined;
  readonly host: string;
  readonly logger: Logger;
  readonly refreshIntervalMs?: number;
  /** The first certificate read waits for it (the store's connection). */
  readonly storeReady?: Promise<unknown> | undefined;
  /** A client that has not sent its ClientHello, or finished its handshake, by then is cut (Node's default is 120 s). */
  readonly handshakeTimeoutMs?: number;
  /** CLUSTER_GRANTS: a certificate serves only names its cluster was granted (certificate-table.ts). */
  readonly grants?: ClusterGrants | undefined;
  /** ROUTER_CLUSTER. */
  readonly ownCluster?: string | undefined;
  /** GATEWAYS: the Gateways whose listeners' client certificate validation applies; undefined, every one. */
  readonly gateways?: ReadonlySet<string> | undefined;
  /** Runs on each TCP connection before its ClientHello is read (PROXY_PROTOCOL: node/proxy-header-stage.ts). */
  readonly connectionStage?: ConnectionStage | undefined;
  /** The routing core and its store: TLSRoutes (passthrough.ts). Without them no connection is passed through. */
  readonly passthrough?: { readonly routing: Routing } | undefined;
}

export interface HttpsListener {
  /** `https://host:port` of HTTPS_PORT. */
  readonly url: string;
  /** HTTPS_PORT as bound. */
  readonly port: number;
  /** Every TLS port as bound, with the Gateway listener port it serves (HTTPS_PORT first). */
  readonly ports: readonly TlsPort[];
  readonly server: TlsServer;
  readonly certificates: CertificateSource;
  /** Handshakes that failed (no certificate for the SNI, a client that gave up, a bad hello). */
  handshakeFailures(): number;
  /** For the metrics endpoint: failed handshakes, the certificates served, passed-through connections. */
  families(): MetricFamily[];
  /** The certificate a handshake for `name` gets now (the routing core's 421 rule compares them). */
  certificateOf(name: string): TableCertificate | undefined;
  /** Stops accepting, and resolves once every connection its ports accepted has closed. */
  close(): Promise<void>;
  /** Cuts the passed-through connections (the router's close, once its drain bound is over). */
  destroyAll(): void;
}

/**
 * The router's TLS ports (HTTPS_PORT, HTTPS_LISTENER_PORTS). Each connection's ClientHello is read first
 * (tls-front.ts); then, by its server name and listener port: a TLSRoute's connection is relayed as it came
 * (passthrough.ts), a name a certificate serves ends TLS here (tls-termination.ts), and any other name is
 * refused: closed where TLSRoutes are served, as they ask, else told `unrecognized_name`.
 * X-Forwarded-Proto follows from the socket.
 */
export async function startHttpsListener(options: HttpsListenerOptions): Promise<HttpsListener> {
  const failures = new HandshakeFailures();
  const tls = terminationOf(options, failures);
  tls.certificates.start(options.storeReady);
  const passthrough = options.passthrough && new PassthroughRelay(options.passthrough.routing, Math.random);
  let front: TlsFront;
  try {
    front = await startTlsFront({
      ports: tlsPorts(options.port, options.listenerPorts),
      host: options.host,
      helloTimeoutMs: tls.handshakeTimeoutMs,
      connectionStage: options.connectionStage,
      dispatch: dispatcherOf(tls, passthrough, options.grants, failures),
      refused: (reason) => {
        failures.add();
        options.logger.debug("TLS connection refused before its handshake", { reason });
      },
    });
  } catch (error) {
    tls.certificates.close();
    throw error;
  }
  return listenerOf(options.host, { tls, front, passthrough, failures });
}

/** Handshakes that failed on the TLS ports (edgeslice_tls_handshake_failures_total). */
class HandshakeFailures {
  count = 0;
  add(): void {
    this.count++;
  }
}

/** What ends TLS on the router: the certificates, the client validations read with them, the TLS servers. */
interface Termination {
  readonly certificates: CertificateSource;
  readonly validations: ClientValidationSource;
  readonly terminating: TlsTermination;
  readonly handshakeTimeoutMs: number;
}

/** The certificate source feeding the TLS servers its tables and the client validations (not started). */
function terminationOf(options: HttpsListenerOptions, failures: HandshakeFailures): Termination {
  const { logger } = options;
  let termination: TlsTermination | undefined;
  const validations = new ClientValidationSource(options.reader, logger, options.gateways);
  const certificates = createCertificateSource({
    reader: options.reader,
    storeKey: options.storeKey,
    logger,
    grants: options.grants,
    ownCluster: options.ownCluster,
    onTable: (table) => termination?.useTable(table),
    onVersions: async (changed, present) => {
      await validations.update(changed, present);
      termination?.useValidations([...validations.table().byPort.values()].flat());
    },
    ...(options.refreshIntervalMs === undefined ? {} : { intervalMs: options.refreshIntervalMs }),
  });
  const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
  const terminating = new TlsTermination({
    certificates,
    httpServer: options.httpServer,
    http2Front: options.http2Front,
    handshakeTimeoutMs,
    logger,
    failed: () => failures.add(),
  });
  termination = terminating;
  return { certificates, validations, terminating, handshakeTimeoutMs };
}

/** A terminated connection's bytes are all read through its TLS socket: none to replay. */
const NOTHING_YET = Buffer.alloc(0);

/**
 * Where a connection goes by its server name and listener port: a TLSRoute's is relayed, a name a certificate
 * serves ends TLS here, any other is refused.
 */
function dispatcherOf(
  tls: Termination,
  passthrough: PassthroughRelay | undefined,
  grants: ClusterGrants | undefined,
  failures: HandshakeFailures,
): (connection: TlsConnection) => void {
  const { terminating, validations } = tls;
  return (connection) => {
    const routes = passthrough?.routes();
    const found = passthrough?.match(routes, connection);
    if (found && passthrough) {
      if (!passthrough.terminates(found, connection)) return passthrough.relay(connection, found);
      return terminating.acceptThen(connection, (socket) =>
        passthrough.relay({ ...connection, socket, hello: NOTHING_YET }, found),
      );
    }
    if (terminating.serves(connection.serverName)) {
      const { listenerPort, serverName } = connection;
      return terminating.accept(
        connection,
        validationFor(validations.table(), listenerPort, serverName, grants),
      );
    }
    failures.add();
    const passthroughPort = passthrough?.usesPort(routes, connection.listenerPort) === true;
    if (passthroughPort || connection.serverName === undefined) connection.socket.destroy();
    else refuseUnknownName(connection.socket);
  };
}

/** The started listener's face: its ports, metrics, the certificate a name gets, and closing. */
function listenerOf(
  host: string,
  parts: {
    readonly tls: Termination;
    readonly front: TlsFront;
    readonly passthrough: PassthroughRelay | undefined;
    readonly failures: HandshakeFailures;
  },
): HttpsListener {
  const { tls, front, passthrough, failures } = parts;
  const { certificates } = tls;
  const port = front.bound[0]?.port ?? 0;
  return {
    url: `https://${endpointAddress({ ip: host, port })}`,
    port,
    ports: front.bound,
    server: tls.terminating.server,
    certificates,
    handshakeFailures: () => failures.count,
    families: () => [
      {
        name: "edgeslice_tls_handshake_failures_total",
        type: "counter",
        help: "TLS handshakes on the TLS ports that failed: no certificate or route for the SNI, a bad hello, a client that gave up.",
        samples: [{ value: failures.count }],
      },
      certificateExpiryFamily(certificates.expiries()),
      {
        name: "edgeslice_tls_certificates",
        type: "gauge",
        help: "Certificates the HTTPS listener serves (certificate records that decoded, opened and loaded).",
        samples: [{ value: certificates.table().size }],
      },
      ...(passthrough?.families() ?? []),
    ],
    certificateOf: (name) => selectCertificate(certificates.table(), name),
    close() {
      certificates.close();
      front.destroyUndecided();
      return front.close();
    },
    destroyAll() {
      front.destroyUndecided();
      passthrough?.destroyAll();
    },
  };
}

/**
 * A name no certificate and no TLSRoute serves: the `unrecognized_name` alert (RFC 6066 §3), so the client
 * reports that the server does not know the name rather than a dropped connection. What the client still
 * sends is read and dropped, so closing does not reset the connection before the alert is read.
 */
function refuseUnknownName(socket: Socket): void {
  socket.on("error", () => socket.destroy());
  socket.resume();
  socket.write(UNRECOGNIZED_NAME_ALERT);
  endThenDestroy(socket, 1_000);
}

/**
 * The router's HTTPS listener when TLS_STORE_KEY is set; without it, none, and the log says why once (the
 * certificate records' keys cannot be opened without it).
 */
export async function startRouterHttps(
  settings: {
    readonly httpsPort?: number | undefined;
    readonly tlsListenerPorts?: readonly TlsPort[] | undefined;
    readonly tlsStoreKey?: Uint8Array | undefined;
    readonly clusterGrants?: ClusterGrants | undefined;
    readonly cluster?: string | undefined;
    readonly gateways?: ReadonlySet<string> | undefined;
  },
  options: Omit<
    HttpsListenerOptions,
    "storeKey" | "port" | "reader" | "grants" | "ownCluster" | "gateways"
  > & {
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
    listenerPorts: settings.tlsListenerPorts,
    grants: settings.clusterGrants,
    ownCluster: settings.cluster,
    gateways: settings.gateways,
  });
  options.logger.info("router listening for HTTPS", {
    url: listener.url,
    ...(listener.ports.length > 1 ? { listenerPorts: listener.ports } : {}),
    http2: options.http2Front !== undefined,
  });
  return listener;
}

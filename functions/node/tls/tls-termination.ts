import type { Server } from "node:http";
import { createServer, type TLSSocket, type Server as TlsServer } from "node:tls";
import type { Logger } from "../../../lib/logger.js";
import type { CertificateSource } from "./certificate-source.js";
import { type CertificateTable, selectCertificate, type TableCertificate } from "./certificate-table.js";
import type { TlsConnection } from "./tls-front.js";

/** HTTP/2 to clients (functions/node/http2/): takes a TLS socket whose ALPN chose h2. */
export interface Http2Front {
  accept(socket: TLSSocket): void;
  close(): Promise<void>;
}

export interface TlsTerminationOptions {
  readonly certificates: CertificateSource;
  /** The router's HTTP/1.1 server: TLS sockets that chose http/1.1 are handed to it as connections. */
  readonly httpServer: Server;
  /** When given, ALPN offers h2 first and h2 connections go to it. */
  readonly http2Front?: Http2Front | undefined;
  readonly handshakeTimeoutMs: number;
  readonly logger: Logger;
  /** A handshake failed (no certificate for the SNI, a client that gave up, a bad hello). */
  readonly failed: () => void;
}

/**
 * Where the router ends TLS: a `tls.Server` (never listening itself: tls-front.ts hands it connections whose
 * ClientHello it read) whose certificate is chosen per handshake by SNI from the certificate records
 * (certificate-source.ts), and whose secure connections are dispatched by ALPN: `h2` to the HTTP/2 front when
 * there is one, `http/1.1` (or none) to the router's own HTTP/1.1 server, so HTTP/1.1 over TLS keeps the
 * direct path, upgrades and every rule of the cleartext port.
 */
export class TlsTermination {
  readonly server: TlsServer;
  readonly #certificates: CertificateSource;
  /** The certificate the server's default context holds: a client without SNI gets it. */
  #withoutSni: TableCertificate | undefined;

  constructor(options: TlsTerminationOptions) {
    const { certificates, httpServer, http2Front, logger } = options;
    this.#certificates = certificates;
    this.server = createServer({
      ALPNProtocols: http2Front ? ["h2", "http/1.1"] : ["http/1.1"],
      handshakeTimeout: options.handshakeTimeoutMs,
      SNICallback: (servername, callback) => {
        const chosen = selectCertificate(certificates.table(), servername);
        const context = chosen && certificates.context(chosen);
        if (context) callback(null, context);
        else callback(new Error(`no certificate for ${JSON.stringify(servername.slice(0, 253))}`));
      },
    });
    this.server.on("secureConnection", (socket: TLSSocket) => {
      if (socket.alpnProtocol === "h2" && http2Front) http2Front.accept(socket);
      else httpServer.emit("connection", socket);
    });
    this.server.on("tlsClientError", (error) => {
      options.failed();
      logger.debug("TLS handshake failed", { error: error.message });
    });
  }

  /**
   * Points the server's default context, which a client without SNI gets (Node calls SNICallback only for a
   * client that sent a name), at the certificate such a client is given (certificate-table.ts), when it
   * changed. Without one the default context has no certificate, and such handshakes fail.
   */
  useTable(table: CertificateTable): void {
    const chosen = selectCertificate(table, undefined);
    const before = this.#withoutSni;
    const same =
      chosen?.cluster === before?.cluster && chosen?.id === before?.id && chosen?.version === before?.version;
    if (same) return;
    const pair = chosen && this.#certificates.pair(chosen);
    this.server.setSecureContext(pair ? { cert: pair.cert, key: pair.key } : {});
    this.#withoutSni = chosen;
  }

  /** Whether a certificate serves this server name (then `accept` may end the connection's TLS). */
  serves(serverName: string | undefined): boolean {
    const chosen = selectCertificate(this.#certificates.table(), serverName);
    return chosen !== undefined && this.#certificates.context(chosen) !== undefined;
  }

  /** Ends the connection's TLS: its ClientHello goes back into the socket for the TLS server to read. */
  accept(connection: TlsConnection): void {
    connection.socket.unshift(connection.hello);
    this.server.emit("connection", connection.socket);
  }
}

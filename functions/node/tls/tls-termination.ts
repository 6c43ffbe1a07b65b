import type { Server } from "node:http";
import {
  createSecureContext,
  createServer,
  type SecureContext,
  type TLSSocket,
  type Server as TlsServer,
} from "node:tls";
import type { Logger } from "../../../lib/logger.js";
import type { CertificateSource } from "./certificate-source.js";
import { type CertificateTable, selectCertificate, type TableCertificate } from "./certificate-table.js";
import type { TableValidation } from "./client-validation-table.js";
import type { TlsConnection } from "./tls-front.js";

/** HTTP/2 to clients (functions/node/http2-front/): takes a TLS socket whose ALPN chose h2. */
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

/** The client certificate validation of a server: what it asks of clients, and the CA bundle it checks against. */
export type ServerValidation = Pick<TableValidation, "mode" | "ca" | "version">;

/** One tls.Server: one per client validation in use (mode and CA bundle), and one asking for no certificate. */
interface Terminating {
  readonly server: TlsServer;
  readonly validation: ServerValidation | undefined;
  /** The certificate its default context holds: a client without SNI gets it. */
  withoutSni: TableCertificate | undefined;
}

/**
 * Where the router ends TLS: `tls.Server`s (never listening themselves: tls-front.ts hands them connections
 * whose ClientHello it read) whose certificate is chosen per handshake by SNI from the certificate records
 * (certificate-source.ts), and whose secure connections are dispatched by ALPN: `h2` to the HTTP/2 front when
 * there is one, `http/1.1` (or none) to the router's own HTTP/1.1 server, so HTTP/1.1 over TLS keeps the
 * direct path, upgrades and every rule of the cleartext port.
 *
 * Client certificates (Gateway.spec.tls.frontend): a connection whose listener asks for them goes to a server
 * of its validation, which requests a certificate and checks it against the validation's CA bundle, held in
 * the TLS context with the server's certificate (Node checks the peer against the context SNI chose):
 * AllowValidOnly ends any handshake without a valid one (OpenSSL's `certificate_required` alert when none is
 * sent), AllowInsecureFallback lets every client in. Requesting a certificate is per server in Node, hence a
 * server per validation.
 */
export class TlsTermination {
  /** The server that asks for no client certificate. */
  readonly server: TlsServer;
  readonly #options: TlsTerminationOptions;
  readonly #servers = new Map<string, Terminating>();
  /** TLS contexts of a certificate with a CA bundle, by certificate and bundle version. */
  readonly #contexts = new Map<string, SecureContext>();
  #table: CertificateTable | undefined;
  /** Ends TLS for TLSRoutes of Terminate listeners (made on first use); offers no ALPN protocol. */
  #relayServer: TlsServer | undefined;
  /** What becomes of each connection handed to `#relayServer` once its TLS is up, by its TCP socket. */
  readonly #secured = new WeakMap<object, (socket: TLSSocket) => void>();

  constructor(options: TlsTerminationOptions) {
    this.#options = options;
    this.server = this.#terminating(undefined).server;
  }

  /**
   * A new certificate table: points each server's default context, which a client without SNI gets (Node
   * calls SNICallback only for a client that sent a name), at the certificate such a client is given
   * (certificate-table.ts), when it changed. Without one the default context has no certificate, and such
   * handshakes fail.
   */
  useTable(table: CertificateTable): void {
    this.#table = table;
    this.#contexts.clear();
    for (const terminating of this.#servers.values()) this.#defaultContext(terminating, table);
    this.#relayServer?.setSecureContext(this.#defaultOptions(table, undefined));
  }

  /** Keeps only the servers of these validations (and the one without): the rest are no longer used. */
  useValidations(validations: Iterable<ServerValidation>): void {
    const kept = new Set([...validations].map(keyOf));
    let dropped = false;
    for (const key of [...this.#servers.keys()]) {
      if (key === "" || kept.has(key)) continue;
      this.#servers.delete(key);
      dropped = true;
    }
    // Contexts of a bundle no server uses any more go with them; the others are made again as needed.
    if (dropped) this.#contexts.clear();
  }

  /** Whether a certificate serves this server name (then `accept` may end the connection's TLS). */
  serves(serverName: string | undefined): boolean {
    const certificates = this.#options.certificates;
    const chosen = selectCertificate(certificates.table(), serverName);
    return chosen !== undefined && certificates.context(chosen) !== undefined;
  }

  /**
   * Ends the connection's TLS, asking for a client certificate when its listener's `validation` does: its
   * ClientHello goes back into the socket for the TLS server to read.
   */
  accept(connection: TlsConnection, validation?: ServerValidation): void {
    connection.socket.unshift(connection.hello);
    this.#terminating(validation).server.emit("connection", connection.socket);
  }

  /**
   * Ends the connection's TLS with the certificate its server name gets, offering no application protocol,
   * and hands the decrypted stream to `secured` (a TLSRoute of a Terminate listener: the bytes go on as TCP).
   */
  acceptThen(connection: TlsConnection, secured: (socket: TLSSocket) => void): void {
    const server = this.#relayServer ?? this.#newRelayServer();
    this.#secured.set(connection.socket, secured);
    connection.socket.unshift(connection.hello);
    server.emit("connection", connection.socket);
  }

  #newRelayServer(): TlsServer {
    const server = createServer({
      handshakeTimeout: this.#options.handshakeTimeoutMs,
      SNICallback: (servername, callback) => this.#sniContext(servername, undefined, callback),
    });
    server.on("secureConnection", (socket: TLSSocket) => {
      // Node keeps the TCP socket a server-side TLSSocket wraps as `_parent` (as client-tls.ts reads it).
      const parent = (socket as unknown as { _parent?: object | null })._parent;
      const secured = parent ? this.#secured.get(parent) : undefined;
      if (secured) secured(socket);
      else socket.destroy();
    });
    server.on("tlsClientError", (error) => {
      this.#options.failed();
      this.#options.logger.debug("TLS handshake failed", { error: error.message });
    });
    if (this.#table) server.setSecureContext(this.#defaultOptions(this.#table, undefined));
    this.#relayServer = server;
    return server;
  }

  #sniContext(
    servername: string,
    validation: ServerValidation | undefined,
    callback: (error: Error | null, context?: SecureContext) => void,
  ): void {
    const chosen = selectCertificate(this.#options.certificates.table(), servername);
    const context = chosen && this.#context(chosen, validation);
    if (context) callback(null, context);
    else callback(new Error(`no certificate for ${JSON.stringify(servername.slice(0, 253))}`));
  }

  #terminating(validation: ServerValidation | undefined): Terminating {
    const key = validation ? keyOf(validation) : "";
    let terminating = this.#servers.get(key);
    if (terminating) return terminating;
    terminating = { server: this.#server(validation), validation, withoutSni: undefined };
    this.#servers.set(key, terminating);
    if (this.#table) this.#defaultContext(terminating, this.#table);
    return terminating;
  }

  #server(validation: ServerValidation | undefined): TlsServer {
    const { httpServer, http2Front, logger } = this.#options;
    const server = createServer({
      ALPNProtocols: http2Front ? ["h2", "http/1.1"] : ["http/1.1"],
      handshakeTimeout: this.#options.handshakeTimeoutMs,
      ...(validation ? { requestCert: true, rejectUnauthorized: validation.mode === "AllowValidOnly" } : {}),
      SNICallback: (servername, callback) => this.#sniContext(servername, validation, callback),
    });
    server.on("secureConnection", (socket: TLSSocket) => {
      if (socket.alpnProtocol === "h2" && http2Front) http2Front.accept(socket);
      else httpServer.emit("connection", socket);
    });
    server.on("tlsClientError", (error) => {
      this.#options.failed();
      logger.debug("TLS handshake failed", { error: error.message });
    });
    return server;
  }

  /** The certificate's TLS context, with the validation's CA bundle when there is one (made once per pair). */
  #context(
    certificate: TableCertificate,
    validation: ServerValidation | undefined,
  ): SecureContext | undefined {
    const certificates = this.#options.certificates;
    if (!validation) return certificates.context(certificate);
    const key = `${certificate.cluster}\n${certificate.id}\n${certificate.version}\n${validation.version}`;
    let context = this.#contexts.get(key);
    if (context) return context;
    const pair = certificates.pair(certificate);
    if (!pair) return undefined;
    context = createSecureContext({ cert: pair.cert, key: pair.key, ca: validation.ca });
    this.#contexts.set(key, context);
    return context;
  }

  #defaultContext(terminating: Terminating, table: CertificateTable): void {
    const chosen = selectCertificate(table, undefined);
    const before = terminating.withoutSni;
    const same =
      chosen?.cluster === before?.cluster && chosen?.id === before?.id && chosen?.version === before?.version;
    if (same && terminating.validation === undefined) return;
    terminating.server.setSecureContext(this.#defaultOptions(table, terminating.validation));
    terminating.withoutSni = chosen;
  }

  /** The default context's options: the certificate a client without SNI gets, with the validation's CAs. */
  #defaultOptions(table: CertificateTable, validation: ServerValidation | undefined) {
    const chosen = selectCertificate(table, undefined);
    const pair = chosen && this.#options.certificates.pair(chosen);
    const ca = validation ? { ca: validation.ca } : {};
    return pair ? { cert: pair.cert, key: pair.key, ...ca } : {};
  }
}

function keyOf(validation: ServerValidation): string {
  return `${validation.mode}\n${validation.version}`;
}

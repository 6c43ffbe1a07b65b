import type { NetConnectOpts } from "node:net";
import { connect, createSecureContext, type SecureContext } from "node:tls";
import type { SocketConnector } from "../../../lib/http1/connection-socket.js";
import type { BackendTlsPolicyRecord } from "../../../store/backend-tls.js";
import { endpointAddress } from "../../../store/records.js";
import { backendIdentityCheck, type IdentityCheck } from "./backend-identity.js";

/**
 * How connections to the backends of one BackendTLSPolicy of one cluster are opened, for one version of the
 * policy's record: pools are kept per setup (node/https-dispatcher.ts), so a connection validated under one
 * version is never reused once the policy or its CA bundle changed.
 */
export interface BackendTlsSetup {
  readonly cluster: string;
  /** The BackendTLSPolicy, `namespace/name`. */
  readonly policy: string;
  /** The record's version (sha256 of its validation). */
  readonly version: string;
  /** The Gateway whose backend client certificate is presented, and that certificate's version. */
  readonly client?: { readonly gateway: string; readonly version: string } | undefined;
  readonly connector: SocketConnector;
}

/** A backend refused by TLS (its chain, its name, its handshake): `reason` is the error's code. */
export type TlsRefusal = (address: string, setup: BackendTlsSetup, reason: string, error: Error) => void;

/** A Gateway's backend client certificate (Gateway.spec.tls.backend), its key opened. */
export interface ClientCertificatePair {
  readonly gateway: string;
  /** sha256 of the chain. */
  readonly version: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * The setup of a policy record: one TLS context (the policy's CA bundle, or Node's bundled roots for
 * WellKnownCACertificates System; the client certificate when one is given), the policy's hostname as SNI,
 * and its name check (backend-identity.ts). Throws when TLS cannot load the CA bundle or the pair.
 */
export function backendTlsSetup(
  cluster: string,
  record: BackendTlsPolicyRecord,
  refused: TlsRefusal,
  client?: ClientCertificatePair,
): BackendTlsSetup {
  const context = createSecureContext({
    ...("pem" in record.trust ? { ca: record.trust.pem } : {}),
    ...(client ? { cert: client.cert, key: client.key } : {}),
  });
  const setup: BackendTlsSetup = {
    cluster,
    policy: record.id,
    version: record.version,
    client: client && { gateway: client.gateway, version: client.version },
    connector: new TlsConnector(
      context,
      record.hostname,
      backendIdentityCheck(record),
      (address, reason, error) => refused(address, setup, reason, error),
    ),
  };
  return setup;
}

/** Opens TLS over the TCP connection a pool asks for; connected once the handshake and the checks passed. */
class TlsConnector implements SocketConnector {
  readonly connectedEvent = "secureConnect";
  readonly #context: SecureContext;
  readonly #servername: string;
  readonly #check: IdentityCheck;
  readonly #refused: (address: string, reason: string, error: Error) => void;

  constructor(
    context: SecureContext,
    servername: string,
    check: IdentityCheck,
    refused: (address: string, reason: string, error: Error) => void,
  ) {
    this.#context = context;
    this.#servername = servername;
    this.#check = check;
    this.#refused = refused;
  }

  open(options: NetConnectOpts) {
    const socket = connect({
      ...options,
      secureContext: this.#context,
      servername: this.#servername,
      checkServerIdentity: this.#check,
      rejectUnauthorized: true,
      ALPNProtocols: ["http/1.1"],
    });
    let tcpConnected = false;
    // Registered before the pool's own listener: a failure before the handshake completed is a connect
    // failure (lib/http-exchange.ts onError: `syscall: "connect"`, nothing of the request was sent), so the
    // attempt is refused like a closed port, and another backend may take it.
    const beforeHandshake = (error: Error & { syscall?: string; code?: string }) => {
      error.syscall ??= "connect";
      if (tcpConnected) {
        const { host, port } = options as { host: string; port: number };
        this.#refused(endpointAddress({ ip: host, port }), error.code ?? "handshake failed", error);
      }
    };
    socket.once("connect", () => {
      tcpConnected = true;
    });
    socket.once("error", beforeHandshake);
    socket.once("secureConnect", () => socket.off("error", beforeHandshake));
    return socket;
  }
}

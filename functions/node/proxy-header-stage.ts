import type { Server, Socket } from "node:net";
import { Server as TlsServer } from "node:tls";
import type { Logger } from "../../lib/logger.js";
import { MAX_PROXY_HEADER_LENGTH, type ProxyHeader, parseProxyHeader } from "../../lib/proxy-protocol.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "../core/http/trusted-proxies.js";
import type { RouterMetrics } from "../core/observability/metrics.js";
import type { RouterConfig } from "../core/settings/config.js";
import { setConnectionFacts } from "./connection-facts.js";

/**
 * A step a new connection goes through before its protocol reads it (HTTP/1.1, the h2c split, TLS): it calls
 * `next` with the socket once it is done, or ends the connection.
 */
export type ConnectionStage = (socket: Socket, next: (socket: Socket) => void) => void;

/** Why a connection was closed before its protocol saw it. */
export type ProxyHeaderRefusal = "untrusted" | "malformed" | "timeout";

export interface ProxyHeaderStageOptions {
  readonly trusted: TrustedProxies;
  /** How long the first bytes may take to settle whether a header is there and read it whole. */
  readonly timeoutMs: number;
  /** Told each refusal (to count and log it once); `reason` is the parser's for a malformed header. */
  readonly onRefused?: (refusal: ProxyHeaderRefusal, peer: string | undefined, reason?: string) => void;
}

/**
 * PROXY_PROTOCOL (lib/proxy-protocol.ts): a trusted balancer's connection may start with a PROXY header; its
 * source becomes the connection's client (connection-facts.ts) and the bytes after it go to the protocol as if
 * they had come first. A connection without a header is served as it is (so a balancer's probes and clients
 * inside the cluster keep working); a header from a peer outside TRUSTED_PROXIES, a malformed one and one that
 * does not arrive within `timeoutMs` close the connection, since a made-up client address must never be taken.
 * The read is bounded by MAX_PROXY_HEADER_LENGTH bytes: the parser refuses longer headers from their first 16.
 */
export function proxyHeaderStage(options: ProxyHeaderStageOptions): ConnectionStage {
  return (socket, next) => new ProxyHeaderRead(options, socket, next).start();
}

/** One connection's first bytes, gathered until they hold a whole PROXY header, none, or a refused one. */
class ProxyHeaderRead {
  readonly #options: ProxyHeaderStageOptions;
  readonly #socket: Socket;
  readonly #next: (socket: Socket) => void;
  readonly #peer: string | undefined;
  readonly #peerTrusted: boolean;
  #gathered: Buffer | undefined;
  readonly #onData = (chunk: Buffer) => this.#read(chunk);
  readonly #onTimeout = () => this.#refuse("timeout");
  // A reset before the first bytes: nobody else listens on the socket yet.
  readonly #onError = () => this.#socket.destroy();

  constructor(options: ProxyHeaderStageOptions, socket: Socket, next: (socket: Socket) => void) {
    this.#options = options;
    this.#socket = socket;
    this.#next = next;
    this.#peer = socket.remoteAddress;
    this.#peerTrusted = options.trusted.trusts(this.#peer);
  }

  start(): void {
    this.#socket.on("data", this.#onData);
    this.#socket.on("error", this.#onError);
    this.#socket.setTimeout(this.#options.timeoutMs, this.#onTimeout);
  }

  #read(chunk: Buffer): void {
    const bytes = this.#gathered ? Buffer.concat([this.#gathered, chunk]) : chunk;
    const parsed = parseProxyHeader(bytes);
    if (parsed.kind === "incomplete") {
      if (bytes.length < MAX_PROXY_HEADER_LENGTH) this.#gathered = bytes;
      else this.#refuse("malformed", "too long");
      return;
    }
    if (parsed.kind === "invalid") {
      this.#refuse(this.#peerTrusted ? "malformed" : "untrusted", parsed.reason);
      return;
    }
    if (parsed.kind === "header" && !this.#peerTrusted) {
      this.#refuse("untrusted");
      return;
    }
    this.#settle();
    const rest = parsed.kind === "header" ? this.#takeHeader(parsed, bytes) : bytes;
    // No 'data' listener now: the bytes wait in the socket's buffer for the reader `next` adds at once.
    if (rest.length > 0) this.#socket.unshift(rest);
    this.#next(this.#socket);
  }

  /** The header's source becomes the connection's client; returns the bytes after the header. */
  #takeHeader(header: ProxyHeader, bytes: Buffer): Buffer {
    const client = header.source;
    const socket = this.#socket;
    setConnectionFacts(socket, {
      clientIp: client?.ip ?? this.#peer,
      clientPort: client?.port ?? socket.remotePort,
      trustedPeer: client ? this.#options.trusted.trusts(client.ip) : this.#peerTrusted,
      proxied: client !== undefined,
    });
    return bytes.subarray(header.length);
  }

  #refuse(refusal: ProxyHeaderRefusal, reason?: string): void {
    this.#settle();
    this.#options.onRefused?.(refusal, this.#peer, reason);
    this.#socket.destroy();
  }

  #settle(): void {
    this.#socket.off("data", this.#onData);
    this.#socket.off("error", this.#onError);
    this.#socket.setTimeout(0, this.#onTimeout);
  }
}

/**
 * Puts `stage` in front of every 'connection' listener `server` has now (the HTTP server's parser, the h2c
 * split, TLS's handshake), as the h2c split does with the HTTP/1.1 listener. Sockets the HTTPS listener hands
 * over after TLS (`encrypted`) went through the stage on HTTPS_PORT already and pass straight on.
 */
export function withConnectionStage(server: Server, stage: ConnectionStage): void {
  const listeners = server.listeners("connection") as ((this: Server, socket: Socket) => void)[];
  server.removeAllListeners("connection");
  // TLS takes the socket's reads over from the buffered bytes on, and only from a paused socket (a flowing one
  // would go on reading into JavaScript, where nobody listens); HTTP's parser and the h2c split add a 'data'
  // listener at once and need the socket flowing, as it is when a connection arrives.
  const pauses = server instanceof TlsServer;
  const handOn = (socket: Socket) => {
    if (pauses) socket.pause();
    for (const listener of listeners) listener.call(server, socket);
  };
  server.on("connection", (socket: Socket) => {
    if ((socket as { encrypted?: boolean }).encrypted) handOn(socket);
    else stage(socket, handOn);
  });
}

/**
 * The router's stage when PROXY_PROTOCOL is on (undefined when off): bounded by the request head's timeout,
 * each refusal counted in edgeslice_proxy_protocol_refusals_total and logged once per peer and reason.
 */
export function routerProxyHeaderStage(
  config: Pick<RouterConfig, "proxyProtocol" | "trustedProxies" | "clientHeadersTimeoutMs">,
  logger: Logger,
  metrics: RouterMetrics,
): ConnectionStage | undefined {
  if (!config.proxyProtocol) return undefined;
  const warnings = createWarnOnce(logger);
  return proxyHeaderStage({
    trusted: config.trustedProxies ?? NO_TRUSTED_PROXIES,
    timeoutMs: config.clientHeadersTimeoutMs,
    onRefused: (refusal, peer, reason) => {
      metrics.proxyProtocolRefusals[refusal]++;
      warnings.warn(`${peer}`, refusal, "PROXY protocol header refused: connection closed", {
        peer,
        refusal,
        reason,
      });
    },
  });
}

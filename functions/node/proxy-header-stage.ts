import type { Server, Socket } from "node:net";
import { Server as TlsServer } from "node:tls";
import type { Logger } from "../../lib/logger.js";
import { MAX_PROXY_HEADER_LENGTH, parseProxyHeader } from "../../lib/proxy-protocol.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import type { RouterConfig } from "../core/config.js";
import type { RouterMetrics } from "../core/metrics.js";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "../core/trusted-proxies.js";
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
  const { trusted, timeoutMs } = options;
  return (socket, next) => {
    const peer = socket.remoteAddress;
    const peerTrusted = trusted.trusts(peer);
    let gathered: Buffer | undefined;
    const refuse = (refusal: ProxyHeaderRefusal, reason?: string) => {
      settle();
      options.onRefused?.(refusal, peer, reason);
      socket.destroy();
    };
    const onTimeout = () => refuse("timeout");
    // A reset before the first bytes: nobody else listens on the socket yet.
    const onError = () => socket.destroy();
    const settle = () => {
      socket.off("data", onData);
      socket.off("error", onError);
      socket.setTimeout(0, onTimeout);
    };
    const onData = (chunk: Buffer) => {
      const bytes = gathered ? Buffer.concat([gathered, chunk]) : chunk;
      const parsed = parseProxyHeader(bytes);
      if (parsed.kind === "incomplete") {
        if (bytes.length >= MAX_PROXY_HEADER_LENGTH) return refuse("malformed", "too long");
        gathered = bytes;
        return;
      }
      if (parsed.kind === "invalid") return refuse(peerTrusted ? "malformed" : "untrusted", parsed.reason);
      if (parsed.kind === "header" && !peerTrusted) return refuse("untrusted");
      settle();
      let rest = bytes;
      if (parsed.kind === "header") {
        const client = parsed.source;
        setConnectionFacts(socket, {
          clientIp: client?.ip ?? peer,
          clientPort: client?.port ?? socket.remotePort,
          trustedPeer: client ? trusted.trusts(client.ip) : peerTrusted,
          proxied: client !== undefined,
        });
        rest = bytes.subarray(parsed.length);
      }
      // No 'data' listener now: the bytes wait in the socket's buffer for the reader `next` adds at once.
      if (rest.length > 0) socket.unshift(rest);
      next(socket);
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.setTimeout(timeoutMs, onTimeout);
  };
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

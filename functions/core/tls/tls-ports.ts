import type { Result } from "../../../lib/result.js";

/** A router port for TLS and the Gateway listener port its connections count as made to. */
export interface TlsPort {
  readonly listenerPort: number;
  /** The port the router binds (0: any free port). */
  readonly port: number;
}

/** The Gateway listener port HTTPS_PORT serves: the Service in front of the router exposes it as 443. */
export const HTTPS_LISTENER_PORT = 443;

/**
 * HTTPS_LISTENER_PORTS: more Gateway listener ports served over TLS, each on a router port of its own,
 * `listenerPort=routerPort` comma-separated (`8443=9443,8883=9883`). A TLS connection carries no port the way
 * a Host header does, so the router tells a Gateway's TLS listeners on different ports apart (TLSRoutes,
 * `tls.frontend.perPort`) by the port the connection reached.
 */
export function parseTlsListenerPorts(text: string): Result<readonly TlsPort[]> {
  const ports: TlsPort[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const match = /^(\d{1,5})=(\d{1,5})$/.exec(entry);
    const listenerPort = Number(match?.[1]);
    const port = Number(match?.[2]);
    if (!match || listenerPort < 1 || listenerPort > 65535 || port > 65535) {
      return { ok: false, error: `"${entry}" is not listenerPort=routerPort (e.g. 8443=9443)` };
    }
    if (listenerPort === HTTPS_LISTENER_PORT || ports.some((item) => item.listenerPort === listenerPort)) {
      return { ok: false, error: `listener port ${listenerPort} is named twice (443 is HTTPS_PORT's)` };
    }
    if (port !== 0 && ports.some((item) => item.port === port)) {
      return { ok: false, error: `router port ${port} is named twice` };
    }
    ports.push({ listenerPort, port });
  }
  return { ok: true, value: ports };
}

/** HTTPS_PORT (listener port 443) and HTTPS_LISTENER_PORTS: every TLS port the router binds. */
export function tlsPorts(httpsPort: number, more: readonly TlsPort[] | undefined): readonly TlsPort[] {
  return [{ listenerPort: HTTPS_LISTENER_PORT, port: httpsPort }, ...(more ?? [])];
}

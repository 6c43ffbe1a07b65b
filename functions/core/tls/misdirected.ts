import { type ListenerHostnames, listenerPoolOf, mostSpecificListener } from "../routes/listener-ports.js";

/**
 * RFC 9110 §15.5.20 (421 Misdirected Request): on a TLS connection the SNI chose a listener (and a certificate);
 * a request whose authority that listener does not serve was sent on the wrong connection, as a client reusing
 * one connection for several origins does (connection coalescing, RFC 9113 §9.1.1), or with an SNI forged to
 * reach another listener's routes. The client retries on a connection of its own. Gateway API
 * (HTTPRouteHTTPSListenerDetectMisdirectedRequests): 421 whenever the host is served by another listener of
 * the Gateway and port than the one the SNI chose, even when both share one certificate.
 */
export interface MisdirectionFacts {
  /** The SNI, lower case; undefined in cleartext or from a client that sent none (routed by its host). */
  readonly serverName: string | undefined;
  /**
   * The host the request is routed by, normalised (hosts.ts): the Host field, or an absolute-form target's
   * authority, which replaces it (RFC 9112 §3.2.2).
   */
  readonly host: string;
  /** The listener port the request counts as addressed to (listener-ports.ts effectivePort); undefined: 443. */
  readonly port: number | undefined;
  /** The route table's listener pools (listener-ports.ts ListenerHostnames). */
  readonly pools: ListenerHostnames;
  /**
   * Whether a cluster's listeners take part: under CLUSTER_GRANTS only those of clusters granted the SNI's
   * name, so a cluster's listeners never misdirect a connection made for another cluster's host.
   */
  readonly decides: (cluster: string) => boolean;
  /**
   * Which certificate a handshake for a name gets (compared by identity), where the runtime ends TLS: a host
   * that would get another certificate than the SNI did is misdirected too, across Gateways and clusters.
   */
  readonly certificateOf?: ((name: string) => unknown) | undefined;
}

/** Whether the request must be answered 421 (see MisdirectionFacts). */
export function isMisdirected(facts: MisdirectionFacts): boolean {
  const { serverName, host } = facts;
  if (serverName === undefined) return false;
  const sni = serverName.endsWith(".") ? serverName.slice(0, -1) : serverName;
  if (sni === host) return false;
  if (facts.certificateOf) {
    const chosen = facts.certificateOf(sni);
    if (chosen !== undefined && facts.certificateOf(host) !== chosen) return true;
  }
  for (const pool of poolsOn(facts.pools, facts.port ?? 443)) {
    if (!facts.decides(pool.cluster)) continue;
    if (mostSpecificListener(pool.hostnames, sni) !== mostSpecificListener(pool.hostnames, host)) return true;
  }
  return false;
}

interface Pool {
  readonly cluster: string;
  readonly hostnames: readonly string[];
}

const byPort = new WeakMap<ListenerHostnames, ReadonlyMap<number, readonly Pool[]>>();

/** The pools of one port, indexed once per route table. */
function poolsOn(pools: ListenerHostnames, port: number): readonly Pool[] {
  let index = byPort.get(pools);
  if (!index) {
    const built = new Map<number, Pool[]>();
    for (const [key, hostnames] of pools) {
      const pool = listenerPoolOf(key);
      const list = built.get(pool.port) ?? [];
      list.push({ cluster: pool.cluster, hostnames });
      built.set(pool.port, list);
    }
    index = built;
    byPort.set(pools, index);
  }
  return index.get(port) ?? [];
}

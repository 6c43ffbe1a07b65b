import { type IpNetwork, networkContains, parseNetwork } from "../../../lib/cidr.js";
import { ipBytes } from "../../../lib/ip.js";
import type { Result } from "../../../lib/result.js";

/**
 * TRUSTED_PROXIES: the networks of the load balancers in front of the router. A request whose peer is in one
 * of them keeps the forwarding fields it carries (X-Forwarded-For, -Proto, -Host, Forwarded; core/http/headers.ts
 * extends them), and a PROXY protocol header is accepted only from them; anyone else's are replaced by what
 * the router saw itself, since nothing vouches for them.
 */
export interface TrustedProxies {
  /** Canonical CIDR texts, for logs and the explain endpoint. */
  readonly networks: readonly string[];
  /** Whether `ip` (a socket's remoteAddress, IPv4-mapped or not) is a trusted peer; undefined never is. */
  trusts(ip: string | undefined): boolean;
}

/** Peers remembered per process: a handful of balancers in practice; beyond the bound the memo starts over. */
const MEMO_BOUND = 1024;

class TrustedNetworks implements TrustedProxies {
  readonly networks: readonly string[];
  readonly #networks: readonly IpNetwork[];
  readonly #memo = new Map<string, boolean>();

  constructor(networks: readonly IpNetwork[]) {
    this.#networks = networks;
    this.networks = networks.map((network) => network.text);
  }

  trusts(ip: string | undefined): boolean {
    if (ip === undefined) return false;
    const known = this.#memo.get(ip);
    if (known !== undefined) return known;
    const bytes = ipBytes(ip);
    const trusted = bytes !== undefined && this.#networks.some((network) => networkContains(network, bytes));
    if (this.#memo.size >= MEMO_BOUND) this.#memo.clear();
    this.#memo.set(ip, trusted);
    return trusted;
  }
}

/** Nobody is trusted: TRUSTED_PROXIES unset. */
export const NO_TRUSTED_PROXIES: TrustedProxies = { networks: [], trusts: () => false };

/**
 * Parses `10.0.0.0/8, 2001:db8::/32, 192.0.2.10`: CIDRs (lib/cidr.ts, strict about bits past the prefix) or
 * bare addresses (one host), separated by commas.
 */
export function parseTrustedProxies(text: string): Result<TrustedProxies> {
  const networks: IpNetwork[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") return { ok: false, error: "an empty entry (two commas in a row, or one at an end)" };
    const bytes = entry.includes("/") ? undefined : ipBytes(entry);
    if (!entry.includes("/") && bytes === undefined) {
      return { ok: false, error: `"${entry}" is neither an address nor a CIDR (10.0.0.0/8)` };
    }
    const parsed = parseNetwork(bytes ? `${entry}/${bytes.length * 8}` : entry);
    if (!parsed.ok) return parsed;
    networks.push(parsed.value);
  }
  return { ok: true, value: new TrustedNetworks(networks) };
}

/**
 * The client of a request whose peer is trusted: X-Forwarded-For read from its right end (each proxy appends
 * the peer it received from), skipping trusted proxies, up to the first address no trusted proxy is (nginx's
 * real_ip_recursive). An element that is no IP address stops the walk, and the last trusted hop stands: it is
 * the one that passed the garbage on. Every element trusted: the leftmost.
 */
export function clientOfForwardedFor(
  peer: string,
  forwardedFor: string | undefined,
  trusted: TrustedProxies,
): string {
  if (forwardedFor === undefined || !trusted.trusts(peer)) return peer;
  let client = peer;
  let end = forwardedFor.length;
  while (end > 0) {
    const comma = forwardedFor.lastIndexOf(",", end - 1);
    const element = forwardedFor.slice(comma + 1, end).trim();
    end = Math.max(comma, 0);
    if (element === "" && comma >= 0) continue;
    const address = forwardedAddress(element);
    if (address === undefined) return client;
    client = address;
    if (!trusted.trusts(address)) return client;
  }
  return client;
}

/**
 * The client an access log line names: the connection's (or its PROXY header's), or behind trusted proxies the
 * one their X-Forwarded-For names. `forwardedFor` is read only then: a plain request reads no header for it.
 */
export function loggedClient(
  clientIp: string | undefined,
  trustedPeer: boolean,
  forwardedFor: () => string | null | undefined,
  trusted: TrustedProxies,
): string | undefined {
  if (clientIp === undefined || !trustedPeer) return clientIp;
  return clientOfForwardedFor(clientIp, forwardedFor() ?? undefined, trusted);
}

/**
 * The address of one X-Forwarded-For element: a bare literal, or with a port as some balancers write it
 * (`192.0.2.1:5000`, `[2001:db8::1]:5000`, `[2001:db8::1]`); undefined for anything else ("unknown", names).
 */
export function forwardedAddress(element: string): string | undefined {
  let ip = element;
  if (ip.startsWith("[")) {
    const close = ip.indexOf("]");
    if (close < 0) return undefined;
    ip = ip.slice(1, close);
  } else if (ip.indexOf(":") > 0 && ip.indexOf(":") === ip.lastIndexOf(":") && ip.includes(".")) {
    ip = ip.slice(0, ip.indexOf(":"));
  }
  return ipBytes(ip) === undefined ? undefined : ip;
}

/** A trusted peer's X-Forwarded-Proto when it is one the router understands, else the connection's. */
export function forwardedProto(value: string | undefined, connection: "http" | "https"): "http" | "https" {
  if (value === undefined) return connection;
  const first = value.split(",", 1)[0]?.trim().toLowerCase();
  return first === "https" || first === "http" ? first : connection;
}

/**
 * Hop-by-hop fields (RFC 9110 §7.6.1): Connection and every header it names, plus the fixed list below, are
 * about one connection and never forwarded, in either direction. Proxy-Authorization and
 * Proxy-Authenticate are exchanged with the proxy itself (RFC 9110 §11.7.1-2); this router does not
 * authenticate clients that way, so it drops them rather than leak credentials to a backend. Upgrade is
 * dropped from ordinary exchanges; an upgrade request and its answer keep it (UPGRADE_KEPT).
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
  "http2-settings",
]);

/** Connection options (comma separated tokens, case-insensitive), lowercased; none when absent. */
export function connectionTokens(value: string | readonly string[] | undefined | null): string[] {
  // The usual values name no other field: skip the split (this runs for every request and response).
  if (value === undefined || value === null || value === "keep-alive" || value === "close") return [];
  const names: string[] = [];
  for (const part of (typeof value === "string" ? value : value.join(",")).split(",")) {
    const name = part.trim().toLowerCase();
    if (name !== "") names.push(name);
  }
  return names;
}

/** Header names listed in Connection (comma separated tokens, case-insensitive). */
function connectionListed(headers: Headers): string[] {
  return connectionTokens(headers.get("connection"));
}

/** The one rule for both directions: a field (lowercase name) goes past this hop unless it is hop-by-hop or listed. */
export function passesHop(name: string, listed: readonly string[]): boolean {
  return !HOP_BY_HOP.has(name) && (listed.length === 0 || !listed.includes(name));
}

/** A copy of `source` without hop-by-hop headers and the headers named in its Connection header. */
export function withoutHopByHop(source: Headers): Headers {
  const listed = connectionListed(source);
  const out = new Headers();
  source.forEach((value, name) => {
    if (passesHop(name, listed)) out.append(name, value);
  });
  // Headers.forEach joins Set-Cookie values; getSetCookie keeps them apart (RFC 6265 §3).
  if (source.has("set-cookie")) {
    out.delete("set-cookie");
    for (const cookie of source.getSetCookie()) out.append("set-cookie", cookie);
  }
  return out;
}

/**
 * Upgrade is hop-by-hop (RFC 9110 §7.6.1), but on an upgrade request and its answer it is the point of the
 * exchange: the router takes part in the switch (RFC 9110 §7.8, RFC 6455 §4.1), so it passes Upgrade on and
 * sends its own Connection naming it. Every other hop-by-hop field is still dropped (HTTP2-Settings too, so
 * an h2c upgrade is declined by the backend and relayed as an ordinary answer).
 */
export const UPGRADE_KEPT: ReadonlySet<string> = new Set(["upgrade"]);

/** Every Connection line of Node's `rawHeaders` as one comma list; undefined when there is none. */
export function rawConnection(rawHeaders: readonly string[]): string | undefined {
  let connection: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 10 && name.toLowerCase() === "connection") {
      const value = rawHeaders[i + 1] ?? "";
      connection = connection === undefined ? value : `${connection}, ${value}`;
    }
  }
  return connection;
}

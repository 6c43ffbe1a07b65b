/**
 * Host header or URL authority → lookup key: lower case, port stripped, one trailing dot stripped
 * (RFC 1034 §3.1 absolute name). IPv6 literals keep their brackets. Undefined when empty or malformed.
 */
export function normaliseHost(authority: string): string | undefined {
  let host = authority.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return undefined;
    host = host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(":");
    if (colon >= 0) host = host.slice(0, colon);
    if (host.endsWith(".")) host = host.slice(0, -1);
  }
  return host === "" ? undefined : host;
}

/**
 * RFC 9112 §3.2 with RFC 3986 §3.2.2: a Host is an IP-literal or a reg-name (unreserved, pct-encoded and
 * sub-delims characters); anything else (`"`, `{`, a backquote, which the WHATWG URL parser lets through) is
 * an invalid field value, answered 400. `host` is lower case, without port (normaliseHost).
 */
export function isHostSyntax(host: string): boolean {
  if (host.startsWith("[")) return /^\[[0-9a-f:.]+\]$/.test(host);
  return /^(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})+$/.test(host);
}

/** RFC 1123 §2.1 host name label: letters, digits, inner hyphens, 1-63 characters. */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Whether a host pattern that matched `host` covers it: an exact pattern covers its host; a wildcard
 * (`*.example.com`) covers only labels that are DNS labels (Ingress host rules, Gateway API Hostname), never
 * any text before the suffix (`a"b.example.com`), nor the suffix itself.
 */
export function wildcardCovers(pattern: string, host: string): boolean {
  if (!pattern.startsWith("*.")) return true;
  const covered = host.slice(0, host.length - pattern.length + 1);
  if (covered === "") return false;
  for (const label of covered.split(".")) if (!DNS_LABEL.test(label)) return false;
  return true;
}

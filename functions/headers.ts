/**
 * Header rules of a reverse proxy.
 *
 * Hop-by-hop (RFC 9110 §7.6.1): Connection and every header it names, plus the fixed list below, are
 * about one connection and never forwarded, in either direction. Proxy-Authorization and
 * Proxy-Authenticate are exchanged with the proxy itself (RFC 9110 §11.7.1-2); this router does not
 * authenticate clients that way, so it drops them rather than leak credentials to a backend. Upgrade is
 * dropped, so protocol switches (WebSocket) are not proxied.
 *
 * Expect is dropped (RFC 9110 §10.1.1): the router answers for the whole request, and the transports
 * stream the body anyway, so a backend waiting to send 100-continue would only add a round trip.
 *
 * Trust: the router is the edge, so nothing the client sent about earlier hops is verified.
 * X-Forwarded-For and Forwarded are lists: the router appends its own element, and a backend must read
 * only the last one (the element this router added). X-Forwarded-Proto and X-Forwarded-Host describe the
 * request this router received and are overwritten, never taken from the client.
 */
const HOP_BY_HOP = new Set([
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

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name.toLowerCase());
}

/** Header names listed in Connection (comma separated tokens, case-insensitive). */
export function connectionListed(headers: Headers): string[] {
  const value = headers.get("connection");
  if (value === null) return [];
  const names: string[] = [];
  for (const part of value.split(",")) {
    const name = part.trim().toLowerCase();
    if (name !== "") names.push(name);
  }
  return names;
}

/** A copy of `source` without hop-by-hop headers and the headers named in its Connection header. */
export function withoutHopByHop(source: Headers): Headers {
  const listed = connectionListed(source);
  const out = new Headers();
  source.forEach((value, name) => {
    if (HOP_BY_HOP.has(name) || (listed.length > 0 && listed.includes(name))) return;
    out.append(name, value);
  });
  // Headers.forEach joins Set-Cookie values; getSetCookie keeps them apart (RFC 6265 §3).
  if (source.has("set-cookie")) {
    out.delete("set-cookie");
    for (const cookie of source.getSetCookie()) out.append("set-cookie", cookie);
  }
  return out;
}

export interface ForwardingInfo {
  /** The client's IP as the runtime saw it (socket peer, or CF-Connecting-IP); undefined when unknown. */
  readonly clientIp: string | undefined;
  readonly proto: "http" | "https";
  /** The authority the request was routed on (Host header, or the absolute-form target's authority). */
  readonly host: string;
}

/** Headers to send upstream: hop-by-hop and Expect removed, Host kept, forwarding headers set. */
export function upstreamRequestHeaders(incoming: Headers, info: ForwardingInfo): Headers {
  const headers = withoutHopByHop(incoming);
  headers.delete("expect");
  headers.set("host", info.host);
  if (info.clientIp !== undefined) {
    const previous = headers.get("x-forwarded-for");
    headers.set("x-forwarded-for", previous ? `${previous}, ${info.clientIp}` : info.clientIp);
  }
  headers.set("x-forwarded-proto", info.proto);
  headers.set("x-forwarded-host", info.host);
  const element = forwardedElement(info);
  const previous = headers.get("forwarded");
  headers.set("forwarded", previous ? `${previous}, ${element}` : element);
  return headers;
}

/** Headers to send back to the client: hop-by-hop removed. */
export function downstreamResponseHeaders(upstream: Headers): Headers {
  return withoutHopByHop(upstream);
}

/** One RFC 7239 element: `for=` (IPv6 quoted and bracketed, §6; "unknown" when not known, §6.3), host, proto. */
export function forwardedElement(info: ForwardingInfo): string {
  return `for=${forwardedNode(info.clientIp)};host=${tokenOrQuoted(info.host)};proto=${info.proto}`;
}

export function forwardedNode(ip: string | undefined): string {
  if (ip === undefined || ip === "") return "unknown";
  return ip.includes(":") ? `"[${ip}]"` : tokenOrQuoted(ip);
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function tokenOrQuoted(value: string): string {
  return TOKEN.test(value) ? value : `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

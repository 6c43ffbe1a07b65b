/** RFC 7239 Forwarded: the router's own element, and the check that a client's value cannot swallow it. */

/** The hop an element describes (RFC 7239 §5): the request this router received. */
export interface ForwardedHop {
  /** The client's IP as the runtime saw it (socket peer, or CF-Connecting-IP); undefined when unknown. */
  readonly clientIp: string | undefined;
  readonly proto: "http" | "https";
  /** The authority the request was routed on (Host header, or the absolute-form target's authority). */
  readonly host: string;
}

/** One RFC 7239 element: `for=` (IPv6 quoted and bracketed, §6; "unknown" when not known, §6.3), host, proto. */
export function forwardedElement(info: ForwardedHop): string {
  return `for=${forwardedNode(info.clientIp)};host=${tokenOrQuoted(info.host)};proto=${info.proto}`;
}

function forwardedNode(ip: string | undefined): string {
  if (ip === undefined || ip === "") return "unknown";
  return ip.includes(":") ? `"[${ip}]"` : tokenOrQuoted(ip);
}

/**
 * Whether every quoted-string of a Forwarded value is closed (RFC 7239 §4 over RFC 9110 §5.6.4: `"` opens and
 * closes one, `\` escapes the next character inside it), so text appended after a comma starts a new element.
 */
export function closesQuotes(value: string): boolean {
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 34 /* " */) quoted = !quoted;
    else if (c === 92 /* \\ */ && quoted) i++;
  }
  return !quoted;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function tokenOrQuoted(value: string): string {
  return TOKEN.test(value) ? value : `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

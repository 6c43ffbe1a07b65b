/** A Host the parser would leave as it is: lower case, and a port it neither drops (80, 443) nor rewrites. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/** A target the parser would leave as it is: no percent, quote, backslash or other character it escapes. */
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

/**
 * The URL a Node request is routed on: the connection's scheme, the Host and the target as the WHATWG URL parser
 * reads them (dot segments resolved, %2e too), as Workers and the Hono adapter do. A missing Host, a backslash in
 * the path or a Host the parser reads as another host (`a@b`, `a/b`) is refused: undefined means 400.
 */
export function requestUrl(proto: "http" | "https", host?: string, target?: string): string | undefined {
  if (target === undefined) return undefined;
  // The common request, built without the parser.
  if (host !== undefined && PLAIN_HOST.test(host) && PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target)) {
    return `${proto}://${host}${target}`;
  }
  const query = target.indexOf("?");
  if ((query < 0 ? target : target.slice(0, query)).includes("\\")) return undefined;
  try {
    if (target.startsWith("http://") || target.startsWith("https://")) return new URL(target).href;
    if (!host || target[0] !== "/") return undefined;
    const url = new URL(`${proto}://${host}${target}`);
    const hostname = host.includes(":") ? host.replace(/:\d+$/, "") : host;
    if (url.hostname.length !== host.length && url.hostname !== hostname.toLowerCase()) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

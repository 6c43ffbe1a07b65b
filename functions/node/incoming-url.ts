import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";

/**
 * The URL @hono/node-server builds for a request (its `newRequest`, not exported), so an upgrade (upgrade.ts)
 * routes on exactly what the Hono app would have: an absolute-form target as given, otherwise scheme + Host +
 * target, through the WHATWG URL parser (dot segments resolved); a missing Host, a backslash in the path, or
 * a Host the parser reads as another host name (`a@b`, `a/b`) is refused. Undefined means 400.
 */
export function incomingUrl(request: IncomingMessage): string | undefined {
  const target = request.url ?? "";
  const query = target.indexOf("?");
  if ((query < 0 ? target : target.slice(0, query)).includes("\\")) return undefined;
  try {
    if (target.startsWith("http://") || target.startsWith("https://")) return new URL(target).href;
    const host = request.headers.host;
    if (!host || (target !== "" && target[0] !== "/")) return undefined;
    const scheme = (request.socket as Partial<TLSSocket>).encrypted ? "https" : "http";
    const url = new URL(`${scheme}://${host}${target}`);
    const hostname = host.includes(":") ? host.replace(/:\d+$/, "") : host;
    if (url.hostname.length !== host.length && url.hostname !== hostname.toLowerCase()) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

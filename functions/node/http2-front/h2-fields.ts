import { HOP_BY_HOP } from "../../core/http/hop-by-hop.js";

/** Header fields between an HTTP/2 client's flat lists (name, value, ...) and what goes on either side. */

/**
 * An HTTP/2 request's `rawHeaders` as HTTP/1.1 fields: no pseudo-header field (Host comes from :authority
 * through the route's forwarding info, §8.3.1), and the Cookie fields joined into one by "; " (§8.2.3).
 */
export function http1FieldsOf(rawHeaders: readonly string[]): string[] {
  const out: string[] = [];
  let cookie: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    if (name.charCodeAt(0) === 0x3a) continue;
    if (name.length === 6 && name.toLowerCase() === "cookie") {
      cookie = cookie === undefined ? value : `${cookie}; ${value}`;
    } else out.push(name, value);
  }
  if (cookie !== undefined) out.push("cookie", cookie);
  return out;
}

/**
 * A response head (`status` first as :status) or trailers (`status` undefined) as HTTP/2 sends them: names
 * lower-case, and neither a pseudo-header field nor a connection-specific one (RFC 9113 §8.2.2), whatever put
 * one in `fields`.
 */
export function h2FieldsOf(status: number | undefined, fields: readonly string[]): string[] {
  const out = status === undefined ? [] : [":status", String(status)];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = (fields[i] as string).toLowerCase();
    if (HOP_BY_HOP.has(name) || name.charCodeAt(0) === 0x3a) continue;
    out.push(name, fields[i + 1] as string);
  }
  return out;
}

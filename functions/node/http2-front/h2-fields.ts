import type { OutgoingHttpHeaders } from "node:http2";
import { HOP_BY_HOP } from "../../core/http/hop-by-hop.js";

/** Header fields between the router's flat lists (name, value, ...) and node:http2's objects, both ways. */

/**
 * `fields` into `headers`: names lower-case (HTTP/2 wants them so), repeated names as lists, and neither a
 * pseudo-header field nor a connection-specific one (RFC 9113 §8.2.2: Node would refuse it with an exception),
 * whatever put one in the list; `skip` names more to leave out.
 */
export function addFields(
  headers: OutgoingHttpHeaders,
  fields: readonly string[],
  skip?: ReadonlySet<string>,
): OutgoingHttpHeaders {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = (fields[i] as string).toLowerCase();
    if (HOP_BY_HOP.has(name) || name.charCodeAt(0) === 0x3a || skip?.has(name)) continue;
    const value = fields[i + 1] as string;
    const present = headers[name];
    if (present === undefined) headers[name] = value;
    else if (Array.isArray(present)) present.push(value);
    else headers[name] = [String(present), value];
  }
  return headers;
}

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

import type { OutgoingHttpHeaders } from "node:http2";
import { HOP_BY_HOP } from "../../core/hop-by-hop.js";

/**
 * Response fields for an HTTP/2 answer: connection-specific fields are forbidden in HTTP/2 (RFC 9113
 * §8.2.2; Node throws on most of them), so the hop-by-hop ones are left out; the router's own answers add
 * `Connection: close` after some errors for HTTP/1.1, where the connection must not be reused.
 */
export function http2ResponseHeaders(
  headers: readonly (readonly [string, string])[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower)) out[lower] = value;
  }
  return out;
}

/**
 * A relayed response's fields (a flat list: name, value, ...) as HTTP/2 response headers: names lower-case,
 * repeated names as lists, and no connection-specific field (RFC 9113 §8.2.2, whatever put one in the list),
 * which Node's http2 would refuse with an exception.
 */
export function http2ResponseFieldObject(fields: readonly string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = (fields[i] as string).toLowerCase();
    if (HOP_BY_HOP.has(name)) continue;
    const value = fields[i + 1] as string;
    const present = out[name];
    if (present === undefined) out[name] = value;
    else if (Array.isArray(present)) present.push(value);
    else out[name] = [String(present), value];
  }
  return out;
}

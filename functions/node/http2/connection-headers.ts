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

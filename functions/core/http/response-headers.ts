import type { CompiledModifier } from "../../../store/filters/header-modifier.js";
import { connectionTokens, passesHop, rawConnection, UPGRADE_KEPT, withoutHopByHop } from "./hop-by-hop.js";

/** The response rules of a reverse proxy: hop-by-hop fields dropped (hop-by-hop.ts), then the route's filters. */

/**
 * A backend's answer to an upgrade request, from Node's `rawHeaders`, for the client: hop-by-hop removed but
 * Upgrade kept. A 101 (`switched`) gets `Connection: upgrade`; any other answer is the last on its
 * connection, so `Connection: close`, naming upgrade too when Upgrade is kept (a 426 must send Upgrade, and
 * a sender of Upgrade must list it in Connection: RFC 9110 §7.8, §15.5.22).
 */
export function upgradeResponseHeaderList(
  rawHeaders: readonly string[],
  switched: boolean,
  modifier?: CompiledModifier,
): string[] {
  const listed = connectionTokens(rawConnection(rawHeaders));
  const out: string[] = [];
  let upgrade = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const value = rawHeaders[i + 1];
    if (name === undefined || value === undefined) continue;
    const lower = name.toLowerCase();
    if (!passesHop(lower, listed) && !UPGRADE_KEPT.has(lower)) continue;
    if (modifier?.drop.has(lower)) continue;
    if (lower === "upgrade") upgrade = true;
    out.push(name, value);
  }
  if (modifier) for (const [name, value] of modifier.append) out.push(name, value);
  if (switched) out.push("connection", "upgrade");
  else out.push("connection", upgrade ? "upgrade, close" : "close");
  return out;
}

/** Headers to send back to the client: hop-by-hop removed, then the route's ResponseHeaderModifier. */
export function downstreamResponseHeaders(upstream: Headers, modifier?: CompiledModifier): Headers {
  const out = withoutHopByHop(upstream);
  if (modifier) {
    for (const name of modifier.drop) out.delete(name);
    for (const [name, value] of modifier.append) out.append(name, value);
  }
  return out;
}

/** The same rule over Node's parsed header object (undici's response headers; arrays for repeated fields). */
export function downstreamResponseHeaderObject(
  upstream: Record<string, string | string[] | undefined>,
  modifier?: CompiledModifier,
): Record<string, string | string[]> {
  const listed = connectionTokens(upstream.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value !== undefined && passesHop(name, listed) && !modifier?.drop.has(name)) out[name] = value;
  }
  if (modifier) {
    for (const [name, value] of modifier.append) {
      const existing = out[name];
      out[name] =
        existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
  }
  return out;
}

/**
 * The same rule over a flat field list (name, value, ...; names lowercase) as Node's writeHead takes it, in
 * the backend's order: hop-by-hop fields and the route's dropped names removed, its appended fields added,
 * then `own` (name, value) in place of whatever the backend sent under that name (the router's X-Request-Id).
 */
export function downstreamResponseHeaderList(
  fields: readonly string[],
  modifier: CompiledModifier | undefined,
  own: readonly [string, string],
): string[] {
  let connection: string | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] !== "connection") continue;
    const value = fields[i + 1] ?? "";
    connection = connection === undefined ? value : `${connection}, ${value}`;
  }
  const listed = connectionTokens(connection);
  const [ownName, ownValue] = own;
  const out: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name === ownName || !passesHop(name, listed) || modifier?.drop.has(name)) continue;
    out.push(name, fields[i + 1] as string);
  }
  if (modifier) for (const [name, value] of modifier.append) out.push(name, value);
  out.push(ownName, ownValue);
  return out;
}

/**
 * The backend's reason phrase when a client may be sent it (RFC 9112 §4: HTAB, SP, VCHAR and obs-text, the
 * Latin-1 range Node's writeHead and the web Response accept); undefined otherwise, and the status code's
 * default phrase goes out instead. undici decodes the phrase as UTF-8, so a backend's non-Latin-1 bytes arrive
 * as characters past U+00FF, which writeHead would throw on.
 */
export function reasonPhrase(text: string | undefined): string | undefined {
  if (text === undefined || text === "") return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return undefined;
  }
  return text;
}

import { closesQuotes, forwardedElement } from "./forwarded.js";

export { forwardedElement } from "./forwarded.js";

/**
 * Header rules of a reverse proxy.
 *
 * Hop-by-hop (RFC 9110 §7.6.1): Connection and every header it names, plus the fixed list below, are
 * about one connection and never forwarded, in either direction. Proxy-Authorization and
 * Proxy-Authenticate are exchanged with the proxy itself (RFC 9110 §11.7.1-2); this router does not
 * authenticate clients that way, so it drops them rather than leak credentials to a backend. Upgrade is
 * dropped from ordinary exchanges; an upgrade request and its answer keep it (the upgrade rules below).
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

/** Connection options (comma separated tokens, case-insensitive), lowercased; none when absent. */
function connectionTokens(value: string | readonly string[] | undefined | null): string[] {
  // The usual values name no other field: skip the split (this runs for every request and response).
  if (value === undefined || value === null || value === "keep-alive" || value === "close") return [];
  const names: string[] = [];
  for (const part of (typeof value === "string" ? value : value.join(",")).split(",")) {
    const name = part.trim().toLowerCase();
    if (name !== "") names.push(name);
  }
  return names;
}

/** Header names listed in Connection (comma separated tokens, case-insensitive). */
function connectionListed(headers: Headers): string[] {
  return connectionTokens(headers.get("connection"));
}

/** The one rule for both directions: a field (lowercase name) goes past this hop unless it is hop-by-hop or listed. */
function passesHop(name: string, listed: readonly string[]): boolean {
  return !HOP_BY_HOP.has(name) && (listed.length === 0 || !listed.includes(name));
}

/** A copy of `source` without hop-by-hop headers and the headers named in its Connection header. */
function withoutHopByHop(source: Headers): Headers {
  const listed = connectionListed(source);
  const out = new Headers();
  source.forEach((value, name) => {
    if (passesHop(name, listed)) out.append(name, value);
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
  /** core/request-id.ts: sent as X-Request-Id (the client's own when it was valid). */
  readonly requestId?: string;
}

/** Set by the router from ForwardingInfo; whatever the client sent under these names is replaced. */
const REPLACED = new Set(["host", "expect", "x-forwarded-proto", "x-forwarded-host", "x-request-id"]);

const NONE: ReadonlySet<string> = new Set();

/**
 * Upgrade is hop-by-hop (RFC 9110 §7.6.1), but on an upgrade request and its answer it is the point of the
 * exchange: the router takes part in the switch (RFC 9110 §7.8, RFC 6455 §4.1), so it passes Upgrade on and
 * sends its own Connection naming it. Every other hop-by-hop field is still dropped (HTTP2-Settings too, so
 * an h2c upgrade is declined by the backend and relayed as an ordinary answer).
 */
const UPGRADE_KEPT: ReadonlySet<string> = new Set(["upgrade"]);

/**
 * The request rules over any header representation: `forEachField` calls back with each client field
 * (lowercase name), `connection` is the client's Connection value, `emit` receives the upstream fields in
 * order. Both the web Headers version and the Node raw-headers version are this one function.
 */
function rewriteRequestFields(
  connection: string | readonly string[] | undefined | null,
  forEachField: (visit: (name: string, value: string) => void) => void,
  info: ForwardingInfo,
  emit: (name: string, value: string) => void,
  kept: ReadonlySet<string> = NONE,
): void {
  const listed = connectionTokens(connection);
  let forwardedFor: string | undefined;
  let forwarded: string | undefined;
  forEachField((name, value) => {
    if ((!passesHop(name, listed) && !kept.has(name)) || REPLACED.has(name)) return;
    if (name === "x-forwarded-for")
      forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
    else if (name === "forwarded") forwarded = forwarded === undefined ? value : `${forwarded}, ${value}`;
    else emit(name, value);
  });
  // A client's Forwarded that leaves a quoted string open would swallow the router's own element into it
  // (`for="6.6.6.6` + `, for=...`): the backend could no longer find the last element. It is dropped whole;
  // nothing in it was trustworthy anyway.
  if (forwarded !== undefined && !closesQuotes(forwarded)) forwarded = undefined;
  emit("host", info.host);
  if (info.clientIp !== undefined) {
    emit("x-forwarded-for", forwardedFor ? `${forwardedFor}, ${info.clientIp}` : info.clientIp);
  } else if (forwardedFor !== undefined) emit("x-forwarded-for", forwardedFor);
  emit("x-forwarded-proto", info.proto);
  emit("x-forwarded-host", info.host);
  const element = forwardedElement(info);
  emit("forwarded", forwarded ? `${forwarded}, ${element}` : element);
  if (info.requestId !== undefined) emit("x-request-id", info.requestId);
}

/** Headers to send upstream: hop-by-hop and Expect removed, Host kept, forwarding headers set. */
export function upstreamRequestHeaders(incoming: Headers, info: ForwardingInfo): Headers {
  return rewriteWebRequest(incoming, info, NONE);
}

function rewriteWebRequest(incoming: Headers, info: ForwardingInfo, kept: ReadonlySet<string>): Headers {
  const out = new Headers();
  rewriteRequestFields(
    incoming.get("connection"),
    (visit) =>
      incoming.forEach((value, name) => {
        visit(name, value);
      }),
    info,
    (name, value) => out.append(name, value),
    kept,
  );
  return out;
}

/**
 * A WebSocket opening handshake (RFC 6455 §4.2.1: an Upgrade field naming "websocket", case-insensitive):
 * what Workers' fetch turns into a 101 Response carrying a WebSocket.
 */
export function isWebSocketUpgrade(headers: Headers): boolean {
  const upgrade = headers.get("upgrade");
  if (upgrade === null) return false;
  for (const token of upgrade.split(",")) if (token.trim().toLowerCase() === "websocket") return true;
  return false;
}

/** An upgrade request's headers (web Headers): the request rules, Upgrade kept, `Connection: upgrade`. */
export function upstreamUpgradeHeaders(incoming: Headers, info: ForwardingInfo): Headers {
  const out = rewriteWebRequest(incoming, info, UPGRADE_KEPT);
  out.set("connection", "upgrade");
  return out;
}

/**
 * The same rules over Node's `rawHeaders` (name, value, name, value ..., names as the client spelt them):
 * a flat list undici's Pool.request sends as is, with no Headers object built.
 */
export function upstreamRequestHeaderList(rawHeaders: readonly string[], info: ForwardingInfo): string[] {
  const out: string[] = [];
  rewriteRawRequest(rawHeaders, info, NONE, out);
  return out;
}

/**
 * An upgrade request's fields, from Node's `rawHeaders`: the request rules, Upgrade kept, and
 * `Connection: upgrade`.
 */
export function upstreamUpgradeHeaderList(rawHeaders: readonly string[], info: ForwardingInfo): string[] {
  const out: string[] = [];
  rewriteRawRequest(rawHeaders, info, UPGRADE_KEPT, out);
  out.push("connection", "upgrade");
  return out;
}

function rewriteRawRequest(
  rawHeaders: readonly string[],
  info: ForwardingInfo,
  kept: ReadonlySet<string>,
  out: string[],
): void {
  rewriteRequestFields(
    rawConnection(rawHeaders),
    (visit) => {
      for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i];
        const value = rawHeaders[i + 1];
        if (name !== undefined && value !== undefined) visit(name.toLowerCase(), value);
      }
    },
    info,
    (name, value) => out.push(name, value),
    kept,
  );
}

/**
 * A backend's answer to an upgrade request, from Node's `rawHeaders`, for the client: hop-by-hop removed but
 * Upgrade kept. A 101 (`switched`) gets `Connection: upgrade`; any other answer is the last on its
 * connection, so `Connection: close`, naming upgrade too when Upgrade is kept (a 426 must send Upgrade, and
 * a sender of Upgrade must list it in Connection: RFC 9110 §7.8, §15.5.22).
 */
export function upgradeResponseHeaderList(rawHeaders: readonly string[], switched: boolean): string[] {
  const listed = connectionTokens(rawConnection(rawHeaders));
  const out: string[] = [];
  let upgrade = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const value = rawHeaders[i + 1];
    if (name === undefined || value === undefined) continue;
    const lower = name.toLowerCase();
    if (!passesHop(lower, listed) && !UPGRADE_KEPT.has(lower)) continue;
    if (lower === "upgrade") upgrade = true;
    out.push(name, value);
  }
  if (switched) out.push("connection", "upgrade");
  else out.push("connection", upgrade ? "upgrade, close" : "close");
  return out;
}

/** Every Connection line of Node's `rawHeaders` as one comma list; undefined when there is none. */
function rawConnection(rawHeaders: readonly string[]): string | undefined {
  let connection: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 10 && name.toLowerCase() === "connection") {
      const value = rawHeaders[i + 1] ?? "";
      connection = connection === undefined ? value : `${connection}, ${value}`;
    }
  }
  return connection;
}

/**
 * RFC 9112 §6.3: a request has content only with a non-zero Content-Length or a Transfer-Encoding (from
 * Node's `rawHeaders`).
 */
export function hasBody(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name === undefined) continue;
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") return true;
    if (name.length === 14 && name.toLowerCase() === "content-length" && rawHeaders[i + 1]?.trim() !== "0") {
      return true;
    }
  }
  return false;
}

/** Headers to send back to the client: hop-by-hop removed. */
export function downstreamResponseHeaders(upstream: Headers): Headers {
  return withoutHopByHop(upstream);
}

/** The same rule over Node's parsed header object (undici's response headers; arrays for repeated fields). */
export function downstreamResponseHeaderObject(
  upstream: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const listed = connectionTokens(upstream.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value !== undefined && passesHop(name, listed)) out[name] = value;
  }
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

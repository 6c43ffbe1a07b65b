import { requestContentOf } from "../../../lib/http1/request-content.js";
import type { CompiledModifier } from "../../../store/filters/header-modifier.js";
import type { TraceFields } from "../observability/tracing.js";
import { closesQuotes, type ForwardedHop, forwardedElement } from "./forwarded.js";
import { connectionTokens, passesHop, rawConnection, UPGRADE_KEPT } from "./hop-by-hop.js";
import { isValidTraceparent, isValidTracestate } from "./trace-context.js";

export { forwardedElement } from "./forwarded.js";
export {
  downstreamResponseHeaderList,
  downstreamResponseHeaderObject,
  downstreamResponseHeaders,
  reasonPhrase,
  upgradeResponseHeaderList,
} from "./response-headers.js";

/**
 * Request header rules of a reverse proxy (the response's are in response-headers.ts, hop-by-hop fields in
 * hop-by-hop.ts).
 *
 * Expect is dropped (RFC 9110 §10.1.1): the router answers for the whole request, and the transports
 * stream the body anyway, so a backend waiting to send 100-continue would only add a round trip.
 *
 * Trust (core/http/trusted-proxies.ts): a peer in TRUSTED_PROXIES is a load balancer that already wrote the
 * forwarding fields. Its X-Forwarded-For and Forwarded are lists the router appends its own element to, and its
 * X-Forwarded-Proto and X-Forwarded-Host describe the client's request and are kept. Anyone else's are not
 * vouched for: the four fields are replaced by what this router saw (the client's address, the connection's
 * scheme, the Host), so a backend never reads an address a client made up.
 */
export interface ForwardingInfo extends ForwardedHop {
  /** core/http/request-id.ts: sent as X-Request-Id (the client's own when it was valid). */
  readonly requestId?: string;
  /** The Host sent upstream when a route's URLRewrite sets one; X-Forwarded-Host and Forwarded keep `host`. */
  readonly upstreamHost?: string | undefined;
  /** The route's RequestHeaderModifier, applied after the hop-by-hop rules (filters.ts). */
  readonly modifier?: CompiledModifier | undefined;
  /**
   * The client's Connection fields joined, when the caller already read them from Node's `rawHeaders`
   * (node/request-head.ts), null when there were none; left out, the fields are searched for it.
   */
  readonly connection?: string | null;
  /** The peer is a trusted proxy (TRUSTED_PROXIES): its forwarding fields are kept and extended. */
  readonly trustedPeer?: boolean;
  /**
   * W3C trace context (core/observability/tracing.ts): the client's valid traceparent and tracestate go on (or the router's
   * span's traceparent instead), and a request without a valid one gets a new trace; absent, both fields pass
   * as any other.
   */
  readonly trace?: TraceFields;
}

/** Set by the router from ForwardingInfo; whatever the client sent under these names is replaced. */
const REPLACED = new Set(["host", "expect", "x-request-id"]);

const NONE: ReadonlySet<string> = new Set();

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
  const modifier = info.modifier;
  const trusted = info.trustedPeer === true;
  const fields: ForwardingFields = {
    for: undefined,
    forwarded: undefined,
    proto: undefined,
    host: undefined,
    traceparent: undefined,
    tracestate: undefined,
  };
  const trace = info.trace;
  // RFC 9112 §3.2: Host first, so a backend that keeps only so many fields (Node: 2,000) still reads it.
  emit("host", info.upstreamHost ?? info.host);
  forEachField((name, value) => {
    if ((!passesHop(name, listed) && !kept.has(name)) || REPLACED.has(name)) return;
    if (modifier?.drop.has(name)) return;
    if (!FORWARDING.has(name)) emit(name, value);
    else if (name === "traceparent" || name === "tracestate") {
      if (trace === undefined) emit(name, value);
      else collectTrace(fields, name, value);
    } else if (trusted) collectForwarding(fields, name, value);
  });
  if (modifier) for (const [name, value] of modifier.append) emit(name, value);
  emitForwarding(fields, info, emit);
  if (trace) emitTrace(fields, trace, emit);
}

/**
 * The forwarding fields a trusted peer sent, repeated lines joined with ", " (RFC 9110 §5.3) as web Headers
 * join them, so both header shapes pass on the same values.
 */
interface ForwardingFields {
  for: string | undefined;
  forwarded: string | undefined;
  proto: string | undefined;
  host: string | undefined;
  /** The client's traceparent; "" once it came twice (invalid, §3.2). */
  traceparent: string | undefined;
  tracestate: string | undefined;
}

/** The fields the router writes itself from ForwardingInfo (the last two only with `trace`). */
const FORWARDING = new Set([
  "x-forwarded-for",
  "forwarded",
  "x-forwarded-proto",
  "x-forwarded-host",
  "traceparent",
  "tracestate",
]);

function collectTrace(fields: ForwardingFields, name: string, value: string): void {
  if (name === "traceparent") fields.traceparent = fields.traceparent === undefined ? value : "";
  else fields.tracestate = joinedField(fields.tracestate, value);
}

/**
 * W3C Trace Context §3.2 and §3.3: a valid traceparent is continued (by the router's own span when it has one),
 * its tracestate kept when valid; without one the request starts a new trace and any tracestate is dropped.
 */
function emitTrace(
  fields: ForwardingFields,
  trace: TraceFields,
  emit: (name: string, value: string) => void,
): void {
  const client = fields.traceparent;
  const valid = client !== undefined && client !== "" && isValidTraceparent(client);
  emit("traceparent", trace.traceparent ?? (valid ? (client as string) : trace.newTraceparent()));
  const state = fields.tracestate;
  if (valid && state !== undefined && isValidTracestate(state)) emit("tracestate", state);
}

const joinedField = (held: string | undefined, value: string) =>
  held === undefined ? value : `${held}, ${value}`;

function collectForwarding(fields: ForwardingFields, name: string, value: string): void {
  if (name === "x-forwarded-for") fields.for = joinedField(fields.for, value);
  else if (name === "forwarded") fields.forwarded = joinedField(fields.forwarded, value);
  else if (name === "x-forwarded-proto") fields.proto = joinedField(fields.proto, value);
  else fields.host = joinedField(fields.host, value);
}

function emitForwarding(
  fields: ForwardingFields,
  info: ForwardingInfo,
  emit: (name: string, value: string) => void,
): void {
  const forwardedFor = fields.for;
  if (info.clientIp !== undefined) {
    emit("x-forwarded-for", forwardedFor ? `${forwardedFor}, ${info.clientIp}` : info.clientIp);
  } else if (forwardedFor !== undefined) emit("x-forwarded-for", forwardedFor);
  emit("x-forwarded-proto", fields.proto ? fields.proto : info.proto);
  emit("x-forwarded-host", fields.host ? fields.host : info.host);
  // A Forwarded that leaves a quoted string open would swallow the router's own element into it
  // (`for="6.6.6.6` + `, for=...`): the backend could no longer find the last element. It is dropped whole.
  const forwarded =
    fields.forwarded !== undefined && closesQuotes(fields.forwarded) ? fields.forwarded : undefined;
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
    info.connection !== undefined ? info.connection : rawConnection(rawHeaders),
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
 * A request has content (from Node's `rawHeaders`), by the one rule the Node proxy frames requests with
 * (lib/http1/request-content.ts, RFC 9112 §6.3); a framing that cannot be read counts as content, never taken.
 */
export function hasBody(rawHeaders: readonly string[]): boolean {
  try {
    const content = requestContentOf(rawHeaders);
    return content !== undefined && content.length !== 0;
  } catch {
    return true;
  }
}

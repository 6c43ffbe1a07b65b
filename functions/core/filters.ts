import type {
  HeaderModifier,
  PathModifier,
  Redirect,
  RouteMatch,
  RouteRule,
  RuleRetry,
  RuleTimeouts,
} from "../../store/routes.js";
import { HOP_BY_HOP } from "./hop-by-hop.js";
import { authorityPort } from "./hosts.js";
import { normalisePathPrefix, pathOf } from "./routes/request-match.js";

/**
 * HTTPRoute filters as the transports apply them (Gateway API HTTPRouteFilter, standard channel):
 * RequestHeaderModifier and ResponseHeaderModifier, URLRewrite (path and Host sent upstream) and
 * RequestRedirect (answered by the router itself).
 *
 * A header modifier never touches what the router owns: the hop-by-hop fields (RFC 9110 §7.6.1, headers.ts)
 * and the framing (Content-Length), the forwarding fields the router writes (Host, X-Forwarded-For,
 * X-Forwarded-Proto, X-Forwarded-Host, Forwarded, X-Request-Id) and Expect; a rewrite of Host is URLRewrite's
 * `hostname`. On a response the same hop-by-hop and framing fields and X-Request-Id are kept. Names outside
 * these are set, added or removed as the route says; protected ones are left out of the compiled modifier.
 */
export interface CompiledModifier {
  /** Lower-case names whose incoming fields are dropped: `remove`, and `set` (which replaces). */
  readonly drop: ReadonlySet<string>;
  /** Fields written in place of the dropped ones, then fields appended (`add`), in the route's order. */
  readonly append: readonly (readonly [string, string])[];
}

const HOP_AND_FRAMING = [...HOP_BY_HOP, "content-length"];

export const PROTECTED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_AND_FRAMING,
  "host",
  "expect",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "forwarded",
  "x-request-id",
]);

export const PROTECTED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([...HOP_AND_FRAMING, "x-request-id"]);

/** A header modifier without the protected names; undefined when nothing is left to do. */
export function compileModifier(
  modifier: HeaderModifier | undefined,
  protectedNames: ReadonlySet<string>,
): CompiledModifier | undefined {
  if (!modifier) return undefined;
  const allowed = (name: string) => !protectedNames.has(name);
  const drop = new Set<string>();
  const append: [string, string][] = [];
  for (const name of modifier.remove) if (allowed(name)) drop.add(name);
  for (const { name, value } of modifier.set) {
    if (!allowed(name)) continue;
    drop.add(name);
    append.push([name, value]);
  }
  for (const { name, value } of modifier.add) if (allowed(name)) append.push([name, value]);
  return drop.size === 0 && append.length === 0 ? undefined : { drop, append };
}

/** What the transports apply for one rule, compiled once per rule object. */
export interface RulePlan {
  readonly requestHeaders: CompiledModifier | undefined;
  readonly responseHeaders: CompiledModifier | undefined;
  /** HTTPRouteTimeouts, applied by rule-policy.ts withRulePolicy. */
  readonly timeouts: RuleTimeouts | undefined;
  /** HTTPRouteRetry, applied by rule-policy.ts withRulePolicy. */
  readonly retry: RuleRetry | undefined;
}

const plans = new WeakMap<RouteRule, RulePlan[]>();

/**
 * The plan of `rule` for a request sent to its backendRef `backendIndex`: the rule's header modifiers, then
 * that backend's (HTTPBackendRef.filters), compiled once per rule and backend.
 */
export function rulePlan(rule: RouteRule, backendIndex = -1): RulePlan {
  let byBackend = plans.get(rule);
  if (!byBackend) {
    byBackend = [];
    plans.set(rule, byBackend);
  }
  const slot = backendIndex + 1;
  let plan = byBackend[slot];
  if (!plan) {
    const backend = rule.backends[backendIndex];
    const filters = backend && "service" in backend ? backend.filters : undefined;
    plan = {
      requestHeaders: thenModifier(
        compileModifier(rule.filters.requestHeaders, PROTECTED_REQUEST_HEADERS),
        compileModifier(filters?.requestHeaders, PROTECTED_REQUEST_HEADERS),
      ),
      responseHeaders: thenModifier(
        compileModifier(rule.filters.responseHeaders, PROTECTED_RESPONSE_HEADERS),
        compileModifier(filters?.responseHeaders, PROTECTED_RESPONSE_HEADERS),
      ),
      timeouts: rule.timeouts,
      retry: rule.retry,
    };
    byBackend[slot] = plan;
  }
  return plan;
}

/** `first` then `second`, as one modifier: what `second` drops goes, whether incoming or added by `first`. */
export function thenModifier(
  first: CompiledModifier | undefined,
  second: CompiledModifier | undefined,
): CompiledModifier | undefined {
  if (!first || !second) return first ?? second;
  return {
    drop: new Set([...first.drop, ...second.drop]),
    append: [...first.append.filter(([name]) => !second.drop.has(name)), ...second.append],
  };
}

/**
 * A path modifier applied to an origin-form target (its query kept). ReplacePrefixMatch replaces the part the
 * match's PathPrefix matched, whole elements, as HTTPPathModifier's table says: `/foo/bar` matched by `/foo`
 * becomes `/xyz/bar` with `/xyz` or `/xyz/`, `/foo/` becomes `/xyz/`, and a replacement of `/` leaves the
 * rest (`/foo` → `/`). With an Exact match the whole path is the matched part.
 */
export function modifiedPath(target: string, match: RouteMatch, modifier: PathModifier): string {
  const path = pathOf(target);
  const query = target.slice(path.length);
  if (modifier.type === "ReplaceFullPath") return `${modifier.value}${query}`;
  const prefix = match.path.type === "Exact" ? path : normalisePathPrefix(match.path.value);
  const rest = prefix === "/" ? path : path.slice(prefix.length);
  const replacement = normalisePathPrefix(modifier.value);
  const joined = `${replacement === "/" ? "" : replacement}${rest}`;
  return `${joined === "" ? "/" : joined}${query}`;
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/** The request a redirect is computed from: the scheme the client used, and its authority and target. */
export interface RedirectInput {
  readonly proto: "http" | "https";
  readonly authority: string;
  /** Lower case, no port (hosts.ts normaliseHost). */
  readonly host: string;
  readonly path: string;
}

/**
 * RequestRedirect's Location: unset fields keep the request's own. Gateway API HTTPRequestRedirectFilter.port:
 * without a port, a redirect that changes the scheme goes to that scheme's well-known port, otherwise to the
 * port the request came to (its Host's, or its scheme's default); a port that is its scheme's default is left
 * out of the Location.
 */
export function redirectLocation(redirect: Redirect, request: RedirectInput, match: RouteMatch): string {
  const scheme = redirect.scheme ?? request.proto;
  const port =
    redirect.port ??
    (redirect.scheme !== undefined
      ? DEFAULT_PORT[redirect.scheme]
      : (authorityPort(request.authority) ?? DEFAULT_PORT[request.proto]));
  const host = redirect.hostname ?? request.host;
  const path = redirect.path ? modifiedPath(request.path, match, redirect.path) : request.path;
  return `${scheme}://${host}${port === DEFAULT_PORT[scheme] ? "" : `:${port}`}${path}`;
}

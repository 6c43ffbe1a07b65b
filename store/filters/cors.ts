import * as v from "valibot";
import { HTTP_METHODS } from "../../lib/http-methods.js";
import type { Result } from "../../lib/result.js";
import { HeaderNameSchema } from "../wire-values.js";
import type { FilterKind, GatewayFilter } from "./filter-kind.js";
import type { CompiledModifier } from "./header-modifier.js";

/** CORS (HTTPCORSFilter): the router answers preflights itself and adds the Access-Control-* fields. */

/** HTTPCORSFilter as the API server sends it: checked here, not with the route object. */
const GatewayCorsSchema = v.looseObject({
  allowOrigins: v.nullish(v.array(v.string())),
  allowMethods: v.nullish(v.array(v.string())),
  allowHeaders: v.nullish(v.array(v.string())),
  exposeHeaders: v.nullish(v.array(v.string())),
  allowCredentials: v.nullish(v.boolean()),
  maxAge: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

/** HTTPCORSFilter.maxAge's default, in seconds. */
const DEFAULT_MAX_AGE = 5;
/** HTTPCORSFilter.allowMethods: the HTTPMethod enum, or `*` alone for every method. */
const METHODS: ReadonlySet<string> = new Set([...HTTP_METHODS, "*"]);
/** HTTPCORSAllowOrigin: `*`, or scheme://host[:port] whose host may begin with `*.` (no path). */
const ORIGIN = /^(?:\*|[a-z][a-z0-9+.-]*:\/\/(?:\*\.)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?(?::[0-9]{1,5})?)$/;

/**
 * The record's form. Origins are lower-case `scheme://host[:port]`, a host may start with `*.`, or `*` alone;
 * method and header lists may be `["*"]`. `maxAge` in seconds.
 */
export const CorsSchema = v.strictObject({
  allowOrigins: v.array(v.pipe(v.string(), v.maxLength(253))),
  allowMethods: v.array(v.pipe(v.string(), v.maxLength(64))),
  allowHeaders: v.array(HeaderNameSchema),
  exposeHeaders: v.array(HeaderNameSchema),
  allowCredentials: v.boolean(),
  maxAge: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400 * 365)),
});
export type Cors = v.InferOutput<typeof CorsSchema>;

/**
 * Origins lower-cased (schemes and hosts are case-insensitive), header names lower-cased, maxAge defaulted to
 * 5 s as the API says. A value the router could not honour drops the rule (UnsupportedValue).
 */
function translateCors(filter: GatewayFilter): Result<Cors> {
  const parsed = v.safeParse(GatewayCorsSchema, filter.cors ?? {});
  if (!parsed.success) return { ok: false, error: `CORS: ${parsed.issues[0]?.message ?? "invalid"}` };
  const cors = parsed.output;
  const allowOrigins = (cors.allowOrigins ?? []).map((origin) => origin.toLowerCase());
  const badOrigin = allowOrigins.find((origin) => !ORIGIN.test(origin));
  if (badOrigin !== undefined)
    return { ok: false, error: `CORS: origin ${JSON.stringify(badOrigin)} is not scheme://host[:port]` };
  const allowMethods = cors.allowMethods ?? [];
  const badMethod = allowMethods.find((method) => !METHODS.has(method));
  if (badMethod !== undefined)
    return { ok: false, error: `CORS: method ${JSON.stringify(badMethod)} is not supported` };
  const allowHeaders = (cors.allowHeaders ?? []).map((name) => name.toLowerCase());
  const exposeHeaders = (cors.exposeHeaders ?? []).map((name) => name.toLowerCase());
  const badName = [...allowHeaders, ...exposeHeaders].find((name) => !v.is(HeaderNameSchema, name));
  if (badName !== undefined)
    return { ok: false, error: `CORS: ${JSON.stringify(badName)} is not a field name` };
  return {
    ok: true,
    value: {
      allowOrigins,
      allowMethods,
      allowHeaders,
      exposeHeaders,
      allowCredentials: cors.allowCredentials ?? false,
      maxAge: cors.maxAge ?? DEFAULT_MAX_AGE,
    },
  };
}

export const CORS: FilterKind<"cors", typeof CorsSchema, false> = {
  type: "CORS",
  field: "cors",
  schema: CorsSchema,
  translated: "whole-rule",
  onBackendRef: false,
  /** A second CORS filter is refused as the API refuses it. */
  translate(filters: readonly GatewayFilter[]) {
    const [only, ...more] = filters;
    if (!only) return { ok: true, value: undefined };
    if (more.length > 0) return { ok: false, error: "CORS: more than one CORS filter in a rule" };
    return translateCors(only);
  },
};

/**
 * HTTPCORSFilter (Gateway API) as the Fetch standard's CORS protocol reads it (fetch.spec.whatwg.org §3.2).
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered by the router itself; any
 * other request from an allowed origin gets the Access-Control-* fields on the backend's answer, in place of
 * the backend's own. An origin that is not allowed gets no Access-Control-* field at all, so the browser
 * refuses the answer.
 *
 * With credentials allowed, Fetch refuses `*` in Access-Control-Allow-Origin, -Methods and -Headers (it is
 * then a literal name), so the router echoes the request's origin, method and headers instead; without
 * credentials a `*` origin is answered `*`. An echoed origin varies the answer: `Vary: Origin` (Fetch §3.2.5).
 */
export interface CorsRequest {
  readonly method: string;
  readonly headers: { get(name: string): string | null | undefined };
}

export type CorsOutcome =
  /** A preflight: answer 200 with these fields, without calling a backend. */
  | { readonly preflight: readonly (readonly [string, string])[] }
  /** Not a preflight: the backend's answer gets these fields (none when the origin is not allowed). */
  | { readonly response: CompiledModifier | undefined };

const CORS_RESPONSE_FIELDS = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-expose-headers",
];

export function corsOutcome(cors: Cors, request: CorsRequest): CorsOutcome {
  const origin = request.headers.get("origin") ?? undefined;
  const requestedMethod = request.headers.get("access-control-request-method") ?? undefined;
  const preflight = request.method === "OPTIONS" && origin !== undefined && requestedMethod !== undefined;
  const allowOrigin = origin === undefined ? undefined : allowedOrigin(cors, origin);
  if (!preflight) {
    if (allowOrigin === undefined) return { response: undefined };
    const fields = [...originFields(cors, allowOrigin), ...exposeFields(cors)];
    return { response: { drop: new Set(CORS_RESPONSE_FIELDS), append: fields } };
  }
  if (allowOrigin === undefined) return { preflight: [] };
  const fields: [string, string][] = [...originFields(cors, allowOrigin)];
  const methods = listOrEcho(cors.allowMethods, requestedMethod);
  if (methods) fields.push(["access-control-allow-methods", methods]);
  const requestedHeaders = request.headers.get("access-control-request-headers") ?? undefined;
  const headers = listOrEcho(cors.allowHeaders, requestedHeaders);
  if (headers) fields.push(["access-control-allow-headers", headers]);
  fields.push(...exposeFields(cors));
  fields.push(["access-control-max-age", String(cors.maxAge)]);
  return { preflight: fields };
}

/** The Access-Control-Allow-Origin value for `origin`, or undefined when no allowOrigins entry admits it. */
export function allowedOrigin(cors: Cors, origin: string): string | undefined {
  const lower = origin.toLowerCase();
  for (const allowed of cors.allowOrigins) {
    if (allowed === "*") return cors.allowCredentials ? origin : "*";
    if (originMatches(allowed, lower)) return origin;
  }
  return undefined;
}

/**
 * `scheme://host[:port]` against an allowOrigins entry: scheme and port exactly, the host exactly or, for a
 * `*.` entry, any host ending in the rest after one or more labels (`https://*.bar.com` admits
 * `https://a.b.bar.com`, not `https://bar.com`).
 */
export function originMatches(allowed: string, origin: string): boolean {
  const wildcard = allowed.indexOf("://*.");
  if (wildcard < 0) return allowed === origin;
  const scheme = allowed.slice(0, wildcard + 3);
  const suffix = allowed.slice(wildcard + 4);
  if (!origin.startsWith(scheme) || !origin.endsWith(suffix)) return false;
  const labels = origin.slice(scheme.length, origin.length - suffix.length);
  return labels.length > 0 && !labels.includes("/") && !labels.includes(":");
}

function originFields(cors: Cors, allowOrigin: string): [string, string][] {
  const fields: [string, string][] = [["access-control-allow-origin", allowOrigin]];
  if (allowOrigin !== "*") fields.push(["vary", "Origin"]);
  if (cors.allowCredentials) fields.push(["access-control-allow-credentials", "true"]);
  return fields;
}

function exposeFields(cors: Cors): [string, string][] {
  if (cors.exposeHeaders.length === 0) return [];
  // `*` is a wildcard only without credentials (Fetch §3.2.3); with them it would name a field "*".
  const names = cors.allowCredentials
    ? cors.exposeHeaders.filter((name) => name !== "*")
    : cors.exposeHeaders;
  return names.length === 0 ? [] : [["access-control-expose-headers", names.join(", ")]];
}

/** A list, or, when it holds `*`, what the request asked for (valid with or without credentials). */
function listOrEcho(list: readonly string[], requested: string | undefined): string | undefined {
  if (list.includes("*")) return requested?.trim() || undefined;
  return list.length === 0 ? undefined : list.join(", ");
}

import * as v from "valibot";
import { HTTP_METHODS } from "../../../lib/http-methods.js";
import type { Result } from "../../../lib/result.js";
import { type Cors, HeaderNameSchema } from "../../../store/routes.js";
import type { KubeFilter } from "./objects.js";

const KubeCorsSchema = v.looseObject({
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
 * The CORS filter of a rule (HTTPCORSFilter) → the store's form: origins lower-cased (schemes and hosts are
 * case-insensitive), header names lower-cased, maxAge defaulted to 5 s as the API says. A second CORS filter
 * is refused as the API refuses it; a value the router could not honour drops the rule (UnsupportedValue).
 */
export function translateCors(filters: readonly KubeFilter[]): Result<Cors | undefined> {
  const given = filters.filter((filter) => filter.type === "CORS");
  if (given.length === 0) return { ok: true, value: undefined };
  if (given.length > 1) return { ok: false, error: "CORS: more than one CORS filter in a rule" };
  const parsed = v.safeParse(KubeCorsSchema, (given[0] as { cors?: unknown }).cors ?? {});
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

import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { HeaderNameSchema, HeaderValueSchema } from "../wire-values.js";
import { type FilterKind, firstOfType, type GatewayFilter } from "./filter-kind.js";

/**
 * RequestHeaderModifier and ResponseHeaderModifier (HTTPHeaderFilter): one shape, set replaces, add appends,
 * remove deletes; the request's applied before the request goes upstream, the response's to the answer.
 */

const GatewayHeaderPairSchema = v.looseObject({ name: v.string(), value: v.string() });
/** HTTPHeaderFilter as the API server sends it. */
export const GatewayHeaderModifierSchema = v.looseObject({
  set: v.nullish(v.array(GatewayHeaderPairSchema)),
  add: v.nullish(v.array(GatewayHeaderPairSchema)),
  remove: v.nullish(v.array(v.string())),
});
export type GatewayHeaderModifier = v.InferOutput<typeof GatewayHeaderModifierSchema>;

const HeaderPairSchema = v.strictObject({ name: HeaderNameSchema, value: HeaderValueSchema });

/** The record's form: names lower-case. */
export const HeaderModifierSchema = v.strictObject({
  set: v.array(HeaderPairSchema),
  add: v.array(HeaderPairSchema),
  remove: v.array(HeaderNameSchema),
});
export type HeaderModifier = v.InferOutput<typeof HeaderModifierSchema>;

/**
 * Header names are case-insensitive (RFC 9110 §5.1): stored lower-case. A name must be a token and a value
 * a field-value (RFC 9110 §5.5: no CR, LF or NUL, nothing past Latin-1).
 */
export function translateHeaderModifier(modifier: GatewayHeaderModifier): Result<HeaderModifier> {
  const names = [...(modifier.set ?? []), ...(modifier.add ?? [])].map((item) => item.name);
  for (const name of [...names, ...(modifier.remove ?? [])]) {
    if (!v.is(HeaderNameSchema, name.toLowerCase())) {
      return { ok: false, error: `header name ${JSON.stringify(name)} is not a field name (RFC 9110 §5.1)` };
    }
  }
  for (const { name, value } of [...(modifier.set ?? []), ...(modifier.add ?? [])]) {
    if (!v.is(HeaderValueSchema, value)) {
      const why = "holds CR, LF, NUL or characters past Latin-1 (RFC 9110 §5.5)";
      return { ok: false, error: `header ${name} value ${JSON.stringify(value)} ${why}` };
    }
  }
  const pair = (item: { name: string; value: string }) => ({
    name: item.name.toLowerCase(),
    value: item.value,
  });
  return {
    ok: true,
    value: {
      set: (modifier.set ?? []).map(pair),
      add: (modifier.add ?? []).map(pair),
      remove: (modifier.remove ?? []).map((name) => name.toLowerCase()),
    },
  };
}

function headerModifierKind<Field extends "requestHeaders" | "responseHeaders">(
  type: string,
  inputField: string,
  field: Field,
): FilterKind<Field, typeof HeaderModifierSchema, true> {
  return {
    type,
    field,
    schema: HeaderModifierSchema,
    translated: "in-order",
    onBackendRef: true,
    translate(filters: readonly GatewayFilter[]) {
      return firstOfType(filters, type, inputField, GatewayHeaderModifierSchema, (given) => {
        const modifier = translateHeaderModifier(given);
        return modifier.ok ? modifier : { ok: false, error: `${type} ${modifier.error}` };
      });
    },
  };
}

export const REQUEST_HEADER_MODIFIER = headerModifierKind(
  "RequestHeaderModifier",
  "requestHeaderModifier",
  "requestHeaders",
);
export const RESPONSE_HEADER_MODIFIER = headerModifierKind(
  "ResponseHeaderModifier",
  "responseHeaderModifier",
  "responseHeaders",
);

/**
 * The applied form: what a modifier drops and appends, without the names the router keeps for itself
 * (functions/core/forwarding/filters.ts names them); undefined when nothing is left to do.
 */
export interface CompiledModifier {
  /** Lower-case names whose incoming fields are dropped: `remove`, and `set` (which replaces). */
  readonly drop: ReadonlySet<string>;
  /** Fields written in place of the dropped ones, then fields appended (`add`), in the route's order. */
  readonly append: readonly (readonly [string, string])[];
}

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

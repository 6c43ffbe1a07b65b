import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { normalisePathPrefix, pathOf } from "../paths.js";
import { TargetPathSchema } from "../wire-values.js";
import { type FilterProblem, type RuleFacts, unsupported } from "./filter-kind.js";

/** HTTPPathModifier, the path of a RequestRedirect or a URLRewrite. */

const text = v.nullish(v.string());
/** HTTPPathModifier as the API server sends it. */
export const GatewayPathModifierSchema = v.looseObject({
  type: v.string(),
  replaceFullPath: text,
  replacePrefixMatch: text,
});
export type GatewayPathModifier = v.InferOutput<typeof GatewayPathModifierSchema>;

/** The record's form: the whole path, or the part the rule's PathPrefix matched. */
export const PathModifierSchema = v.variant("type", [
  v.strictObject({ type: v.literal("ReplaceFullPath"), value: TargetPathSchema }),
  v.strictObject({ type: v.literal("ReplacePrefixMatch"), value: TargetPathSchema }),
]);
export type PathModifier = v.InferOutput<typeof PathModifierSchema>;

/**
 * An empty replacePrefixMatch is stored as "/": both mean "drop the matched prefix", and the router joins the
 * rest without doubling the slash.
 */
export function translatePathModifier(modifier: GatewayPathModifier): Result<PathModifier> {
  const given =
    modifier.type === "ReplaceFullPath"
      ? modifier.replaceFullPath
      : modifier.type === "ReplacePrefixMatch"
        ? modifier.replacePrefixMatch
        : undefined;
  if (typeof given !== "string")
    return { ok: false, error: `path modifier ${modifier.type} is not supported` };
  const field = modifier.type === "ReplaceFullPath" ? "replaceFullPath" : "replacePrefixMatch";
  const value = given === "" ? "/" : given;
  if (!value.startsWith("/"))
    return { ok: false, error: `${field} ${JSON.stringify(value)} must start with /` };
  if (!v.is(TargetPathSchema, value)) {
    const why = "holds characters a request path cannot carry (RFC 3986: no space, CR, LF, ? or #)";
    return { ok: false, error: `${field} ${JSON.stringify(value)} ${why}` };
  }
  return { ok: true, value: { type: modifier.type as PathModifier["type"], value } };
}

/** HTTPPathModifier.replacePrefixMatch: a rule with it must match by PathPrefix only. */
export function checkPrefixMatches(
  modifier: PathModifier | undefined,
  rule: RuleFacts,
): FilterProblem | undefined {
  if (modifier?.type !== "ReplacePrefixMatch") return undefined;
  if (rule.paths.every((path) => path.type === "PathPrefix")) return undefined;
  return unsupported("ReplacePrefixMatch needs PathPrefix matches only");
}

/** The match a request was routed by (RouteMatch): a PathPrefix match's prefix is what ReplacePrefixMatch replaces. */
export interface MatchedBy {
  readonly path: { readonly type: "Exact" | "PathPrefix"; readonly value: string };
}

/**
 * The applied form, on an origin-form target (its query kept). ReplacePrefixMatch replaces the part the
 * match's PathPrefix matched, whole elements, as HTTPPathModifier's table says: `/foo/bar` matched by `/foo`
 * becomes `/xyz/bar` with `/xyz` or `/xyz/`, `/foo/` becomes `/xyz/`, and a replacement of `/` leaves the
 * rest (`/foo` → `/`). With an Exact match the whole path is the matched part.
 */
export function modifiedPath(target: string, match: MatchedBy, modifier: PathModifier): string {
  const path = pathOf(target);
  const query = target.slice(path.length);
  if (modifier.type === "ReplaceFullPath") return `${modifier.value}${query}`;
  const prefix = match.path.type === "Exact" ? path : normalisePathPrefix(match.path.value);
  const rest = prefix === "/" ? path : path.slice(prefix.length);
  const replacement = normalisePathPrefix(modifier.value);
  const joined = `${replacement === "/" ? "" : replacement}${rest}`;
  return `${joined === "" ? "/" : joined}${query}`;
}

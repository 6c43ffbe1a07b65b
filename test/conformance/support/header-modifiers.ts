import { backend, prefixMatch } from "./conformance-base.js";

/** An HTTPHeaderFilter as the conformance manifests write it: `[name, value]` pairs to set and add, names to remove. */
export interface ModifierSpec {
  readonly set?: readonly (readonly [string, string])[];
  readonly add?: readonly (readonly [string, string])[];
  readonly remove?: readonly string[];
}

export type HeaderModifierType = "RequestHeaderModifier" | "ResponseHeaderModifier";

const pairs = (list: readonly (readonly [string, string])[]) =>
  list.map(([name, value]) => ({ name, value }));

/** The filter object of a RequestHeaderModifier or ResponseHeaderModifier, with only the lists given. */
export function headerModifierFilter(type: HeaderModifierType, modifier: ModifierSpec) {
  const field = type === "RequestHeaderModifier" ? "requestHeaderModifier" : "responseHeaderModifier";
  return {
    type,
    [field]: {
      ...(modifier.set ? { set: pairs(modifier.set) } : {}),
      ...(modifier.add ? { add: pairs(modifier.add) } : {}),
      ...(modifier.remove ? { remove: [...modifier.remove] } : {}),
    },
  };
}

/** A rule of the header-modifier tests: a path prefix, one modifier (on the rule or its backendRef), infra-backend-v1. */
export function modifiedRule(
  type: HeaderModifierType,
  path: string,
  modifier: ModifierSpec,
  where: "rule" | "backendRef" = "rule",
) {
  const filters = [headerModifierFilter(type, modifier)];
  if (where === "backendRef") {
    return { matches: [prefixMatch(path)], backendRefs: [backend("infra-backend-v1", { filters })] };
  }
  return { matches: [prefixMatch(path)], filters, backendRefs: [backend("infra-backend-v1")] };
}

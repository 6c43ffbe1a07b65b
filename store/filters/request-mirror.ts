import * as v from "valibot";
import { ServiceIdSchema } from "../names.js";
import { PortNumberSchema } from "../wire-values.js";
import type { FilterContext, FilterKind, GatewayFilter } from "./filter-kind.js";

/**
 * RequestMirror (HTTPRequestMirrorFilter): a copy of each request (of `percent` of them) goes to a Service
 * port too, and its answer is dropped.
 */

/** HTTPRequestMirrorFilter as the API server sends it: checked here, not with the route object. */
const GatewayMirrorSchema = v.looseObject({
  backendRef: v.looseObject({
    group: v.nullish(v.string()),
    kind: v.nullish(v.string()),
    name: v.string(),
    namespace: v.nullish(v.string()),
    port: v.nullish(v.number()),
  }),
  percent: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100))),
  fraction: v.nullish(
    v.looseObject({
      numerator: v.pipe(v.number(), v.integer(), v.minValue(0)),
      denominator: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(1))),
    }),
  ),
});

/**
 * The record's form. The filter list is strict, so a router that predates it skips the record rather than
 * serve the rule without its mirror.
 */
export const MirrorSchema = v.strictObject({
  service: ServiceIdSchema,
  port: PortNumberSchema,
  percent: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
});
export type Mirror = v.InferOutput<typeof MirrorSchema>;

const MirrorsSchema = v.array(MirrorSchema);

export const REQUEST_MIRROR: FilterKind<"mirrors", typeof MirrorsSchema, false> = {
  type: "RequestMirror",
  field: "mirrors",
  schema: MirrorsSchema,
  translated: "whole-rule",
  onBackendRef: false,
  /**
   * Each a Service port and the share of requests copied to it (`percent`, or `fraction`
   * numerator/denominator, default every request). A backendRef that does not resolve is a ResolvedRefs
   * problem like any backendRef's (the sync reports it), and that mirror is left out: there is nowhere to
   * copy to.
   */
  translate(filters: readonly GatewayFilter[], context: FilterContext) {
    const mirrors: Mirror[] = [];
    for (const filter of filters) {
      const parsed = v.safeParse(GatewayMirrorSchema, filter.requestMirror);
      if (!parsed.success)
        return { ok: false, error: `RequestMirror: ${parsed.issues[0]?.message ?? "invalid"}` };
      const { backendRef, percent, fraction } = parsed.output;
      if (fraction && fraction.numerator > (fraction.denominator ?? 100))
        return { ok: false, error: "RequestMirror: fraction above 1" };
      const resolved = context.resolveBackendRef(backendRef);
      if (!resolved) continue;
      const share = percent ?? (fraction ? (100 * fraction.numerator) / (fraction.denominator ?? 100) : 100);
      mirrors.push({ service: resolved.service, port: resolved.port, percent: share });
    }
    return { ok: true, value: mirrors.length > 0 ? mirrors : undefined };
  },
};

/** The applied form's first step: whether this request is copied to `mirror`. `random` returns [0, 1). */
export function isCopied(mirror: Mirror, random: () => number): boolean {
  return mirror.percent >= 100 || random() * 100 < mirror.percent;
}

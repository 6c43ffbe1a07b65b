import * as v from "valibot";
import type { Result } from "../../../lib/result.js";
import type { Mirror } from "../../../store/routes.js";
import { type BackendContext, type RefProblem, resolveBackendRef } from "./backends.js";
import type { KubeBackendRef, KubeFilter } from "./objects.js";

const RequestMirrorSchema = v.looseObject({
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

export interface MirrorTranslation {
  readonly mirrors: readonly Mirror[];
  readonly refProblems: readonly RefProblem[];
}

/**
 * The RequestMirror filters of a rule (HTTPRequestMirrorFilter): each a Service port and the share of
 * requests copied to it (`percent`, or `fraction` numerator/denominator, default every request). A
 * backendRef that does not resolve is a ResolvedRefs problem like any backendRef's, and that mirror is left
 * out: there is nowhere to copy to.
 */
export function translateMirrors(
  filters: readonly KubeFilter[],
  routeNamespace: string,
  context: BackendContext,
  fromKind: "HTTPRoute" | "GRPCRoute" = "HTTPRoute",
): Result<MirrorTranslation, string> {
  const mirrors: Mirror[] = [];
  const refProblems: RefProblem[] = [];
  for (const filter of filters) {
    if (filter.type !== "RequestMirror") continue;
    const parsed = v.safeParse(RequestMirrorSchema, (filter as { requestMirror?: unknown }).requestMirror);
    if (!parsed.success)
      return { ok: false, error: `RequestMirror: ${parsed.issues[0]?.message ?? "invalid"}` };
    const { backendRef, percent, fraction } = parsed.output;
    if (fraction && fraction.numerator > (fraction.denominator ?? 100))
      return { ok: false, error: "RequestMirror: fraction above 1" };
    const resolved = resolveBackendRef(backendRef as KubeBackendRef, routeNamespace, fromKind, context);
    if (resolved.problem) refProblems.push(resolved.problem);
    if (resolved.problem || !("service" in resolved.backend)) continue;
    const share = percent ?? (fraction ? (100 * fraction.numerator) / (fraction.denominator ?? 100) : 100);
    mirrors.push({ service: resolved.backend.service, port: resolved.backend.port, percent: share });
  }
  return { ok: true, value: { mirrors, refProblems } };
}

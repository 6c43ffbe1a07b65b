import * as v from "valibot";
import { type RouteRule, RouteRuleSchema } from "../../../store/routes.js";
import { type BackendContext, type RefProblem, resolveBackendRef } from "./backends.js";
import type { RouteKindSpec } from "./http-route.js";
import { BackendRefSchema, parseWith, routeObjectSchema } from "./objects.js";
import type { RuleTranslation } from "./rules.js";

/**
 * TLSRoute (gateway.networking.k8s.io/v1, standard channel since v1.5), the parts edgeslice reads: parents,
 * SNI hostnames and one rule of weighted backendRefs. The router never ends the TLS of such a connection: it
 * reads the ClientHello's server name, and a TLSRoute attached to a Passthrough listener of that port that
 * claims the name gets the connection's bytes as they came (functions/node/tls/passthrough.ts).
 */
const TlsRuleSchema = v.looseObject({
  name: v.nullish(v.string()),
  backendRefs: v.nullish(v.array(BackendRefSchema)),
});
export type TlsRule = v.InferOutput<typeof TlsRuleSchema>;

export const TLSRouteSchema = routeObjectSchema(TlsRuleSchema);
export type TLSRoute = v.InferOutput<typeof TLSRouteSchema>;

export const parseTLSRoute = (input: unknown) => parseWith(TLSRouteSchema, input);

/** The one match a passthrough rule has: the record format needs one, and a TLS connection has no path. */
const EVERY_CONNECTION = { path: { type: "PathPrefix" as const, value: "/" }, headers: [] };

/**
 * One TLSRouteRule → store rule: its backendRefs resolved as an HTTPRoute's are (a Service of the route's
 * namespace or one a ReferenceGrant from TLSRoute allows; the others keep their weight as `{ invalid }`, so
 * that share of connections is refused, as TLSRouteRule.backendRefs asks). A Service port's appProtocol does
 * not matter: the router relays bytes it cannot read. No filters exist for TLSRoute.
 */
export function translateTlsRule(rule: TlsRule, namespace: string, context: BackendContext): RuleTranslation {
  const refProblems: RefProblem[] = [];
  const backends = (rule.backendRefs ?? []).map((ref) => {
    const resolved = resolveBackendRef(ref, namespace, "TLSRoute", context, { anyAppProtocol: true });
    if (resolved.problem) refProblems.push(resolved.problem);
    return resolved.backend;
  });
  const translated: RouteRule = { matches: [EVERY_CONNECTION], filters: {}, backends };
  const checked = v.safeParse(RouteRuleSchema, translated);
  if (!checked.success) {
    return { ok: false, reason: "UnsupportedValue", message: checked.issues[0]?.message ?? "invalid rule" };
  }
  return { ok: true, rule: checked.output, refProblems, ignored: [] };
}

/** TLSRoute for the route translation (http-route.ts translateRouteOfKind). */
export const TLS_ROUTE_KIND: RouteKindSpec<TlsRule> = {
  kind: "TLSRoute",
  source: "tlsroute",
  translateRule: translateTlsRule,
};

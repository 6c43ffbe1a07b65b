import { modifiedPath } from "../../store/filters/path-modifier.js";
import { redirectLocation } from "../../store/filters/request-redirect.js";
import type { ClusterPlace } from "../../store/places.js";
import type { BackendRef, RouteRule } from "../../store/routes.js";
import { normaliseHost } from "../core/http/hosts.js";
import type { RouteMatchResult } from "../core/routes/route-table.js";
import { shadowedBy } from "../core/routes/shadowing.js";
import { matchRequest } from "../core/routing.js";
import type { Balancer } from "../core/selection/balancer.js";
import type { PassiveEjection } from "../core/selection/ejection.js";
import type { Selection } from "../core/selection/selection.js";
import { backendCandidates, type SelectFor } from "../core/selection/selector.js";
import type { ServedRoute, SnapshotRoutes } from "../core/snapshot/served-routes.js";
import type { ClientLocation } from "../core/steering/origin.js";
import type { RoutingSteering } from "../core/steering/routing-steering.js";
import { describeRefusal, refusalsFor } from "./admin-refusals.js";
import { explainSteering } from "./admin-steering.js";

/**
 * What `/_edgeslice/routes` and `/_edgeslice/explain` say about routes: each route as served (its clusters,
 * rules, matches, filters and backend weights, each backend's endpoints per cluster), and for one request
 * the route, rule and match that win, the weights, and the selection of the backend most requests take.
 */
export function describeRoute(served: ServedRoute) {
  const { route } = served;
  return {
    id: route.id,
    source: route.source,
    hostnames: route.hostnames,
    wildcard: route.wildcard,
    createdAt: route.createdAt,
    ...(route.fallback ? { fallback: true } : {}),
    failStatic: served.failStatic,
    clusters: served.publishers,
    rules: route.rules.map((rule) => ({
      matches: rule.matches,
      filters: rule.filters,
      backends: rule.backends.map((ref) => describeBackend(served, rule, ref)),
    })),
  };
}

function describeBackend(served: ServedRoute, rule: RouteRule, ref: BackendRef) {
  const share = shareOf(rule, ref);
  if (!("service" in ref)) return { invalid: ref.invalid, weight: ref.weight, share };
  return {
    service: ref.service,
    port: ref.port,
    weight: ref.weight,
    share,
    clusters: backendCandidates(served, ref.service, ref.port).map((candidate) => ({
      cluster: candidate.cluster,
      stale: candidate.stale,
      ipv4: {
        endpoints: candidate.backends.ipv4.endpoints.length,
        fallback: candidate.backends.ipv4.fallback,
      },
      ipv6: {
        endpoints: candidate.backends.ipv6.endpoints.length,
        fallback: candidate.backends.ipv6.fallback,
      },
    })),
  };
}

/** The fraction of a rule's requests a backendRef gets (weight / sum of weights). */
function shareOf(rule: RouteRule, ref: BackendRef): number {
  const total = rule.backends.reduce((sum, backend) => sum + backend.weight, 0);
  return total > 0 ? ref.weight / total : 0;
}

/** The backendRef most of a rule's requests go to (the first of the heaviest); undefined when none has weight. */
function heaviest(rule: RouteRule): number | undefined {
  let best: number | undefined;
  rule.backends.forEach((backend, index) => {
    if (backend.weight > 0 && (best === undefined || backend.weight > (rule.backends[best]?.weight ?? 0))) {
      best = index;
    }
  });
  return best;
}

export interface ExplainInput {
  readonly routes: SnapshotRoutes;
  readonly rawHost: string;
  readonly path: string;
  readonly method: string;
  readonly headers: Headers;
  readonly select: SelectFor;
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  /** Cross-cluster steering, for a steered Service (admin-steering.ts); the client's place, if given. */
  readonly steering?: RoutingSteering | undefined;
  readonly places?: ReadonlyMap<string, ClusterPlace> | undefined;
  readonly client?: ClientLocation | undefined;
}

/** explainMatch, with what CLUSTER_GRANTS refused that bears on the request (admin-refusals.ts). */
export function explainRequest(input: ExplainInput) {
  const explained = explainMatch(input);
  const refused = refusalsFor(
    input.routes,
    normaliseHost(input.rawHost),
    "route" in explained ? explained.route.id : undefined,
  );
  if (refused.length === 0) return explained;
  return { ...explained, refused, why: [...explained.why, ...refused.map(describeRefusal)] };
}

function explainMatch(input: ExplainInput) {
  const host = normaliseHost(input.rawHost);
  const { path, method } = input;
  const found =
    host === undefined
      ? undefined
      : matchRequest(input.routes, host, { path, method, headers: input.headers });
  if (!found || host === undefined) {
    return {
      host: host ?? input.rawHost,
      path,
      method,
      result: "no_route",
      why: ["no published route matches"],
    };
  }
  const matched = matchedPart(input, host, found);
  const { redirect } = found.rule.filters;
  if (!redirect) return explainBackend(input, found, matched);
  const location = redirectLocation(
    redirect,
    { proto: "http", authority: input.rawHost, host, path },
    found.match,
  );
  return {
    ...matched,
    result: "redirect",
    redirect: { status: redirect.statusCode, location },
    why: [`RequestRedirect: ${redirect.statusCode} to ${location} (for a request over http)`],
  };
}

type Found = RouteMatchResult<ServedRoute>;

/** What every explanation of a matched request says: the route, rule and match, and the routes it shadows. */
function matchedPart(input: ExplainInput, host: string, found: Found) {
  return {
    host,
    path: input.path,
    method: input.method,
    route: describeRoute(found.entry),
    rule: found.ruleIndex,
    match: found.match,
    hostname: found.hostname ?? null,
    shadowed: shadowedBy(input.routes.table, host, found).map((entry) => ({
      route: entry.route.id,
      clusters: entry.clusters.map((view) => view.name),
    })),
  };
}

/** The rule's backendRefs with their shares; `unresolved` where no cluster of the route has the Service port. */
function backendShares(input: ExplainInput, found: Found) {
  return found.rule.backends.map((backend, index) => ({
    index,
    ...("service" in backend
      ? { service: backend.service, port: backend.port }
      : { invalid: backend.invalid }),
    // Its share is answered 500: no cluster the route is served from has this Service port.
    ...("service" in backend && input.select(found.entry, found.ruleIndex, index).unresolved
      ? { unresolved: true }
      : {}),
    weight: backend.weight,
    share: shareOf(found.rule, backend),
  }));
}

/** A matched rule without a redirect: the backendRef most requests take, and its selection or why none. */
function explainBackend(input: ExplainInput, found: Found, matched: ReturnType<typeof matchedPart>) {
  const chosen = heaviest(found.rule);
  const ref = chosen === undefined ? undefined : found.rule.backends[chosen];
  const backends = backendShares(input, found);
  if (chosen === undefined || !ref || !("service" in ref)) {
    const reason = ref && "invalid" in ref ? ref.invalid : "no backend has a weight";
    return {
      ...matched,
      result: "invalid_backend",
      backends,
      chosen: chosen ?? null,
      why: [`500: ${reason}`],
    };
  }
  const selection = input.select(found.entry, found.ruleIndex, chosen);
  if (selection.unresolved) {
    const clusters = found.entry.clusters.map((view) => view.name).join(", ");
    return {
      ...matched,
      result: "invalid_backend",
      backends,
      chosen,
      why: [
        `500: Service ${ref.service} port ${ref.port} has no record in any cluster the route is served from (${clusters}): BackendNotFound`,
      ],
    };
  }
  return explainSelection(input, found, { matched, backends, chosen }, selection);
}

/** A backendRef that resolves: where its requests go (tiers, clusters, steering) and what is left out. */
function explainSelection(
  input: ExplainInput,
  found: Found,
  {
    matched,
    backends,
    chosen,
  }: {
    readonly matched: ReturnType<typeof matchedPart>;
    readonly backends: ReturnType<typeof backendShares>;
    readonly chosen: number;
  },
  selection: Selection,
) {
  const served = found.entry;
  const { rewrite } = found.rule.filters;
  const excluded = input.ejection.excluded(selection.addresses);
  const usable = selection.addresses.filter((address) => !excluded.has(address)).length;
  const { steering } = input;
  const steered =
    selection.steering && steering
      ? explainSteering({ plan: selection.steering, steering, places: input.places, client: input.client })
      : undefined;
  return {
    ...matched,
    result: usable > 0 ? "proxy" : "no_endpoints",
    backends,
    chosen,
    upstream: {
      path: rewrite?.path ? modifiedPath(input.path, found.match, rewrite.path) : input.path,
      ...(rewrite?.hostname ? { host: rewrite.hostname } : {}),
    },
    clusters: selection.clusters,
    droppedStale: served.failStatic
      ? []
      : served.publishers.filter((publisher) => publisher.stale).map((publisher) => publisher.cluster),
    zoneHints: selection.zoneHints,
    tiers: selection.tiers.map((tier) => ({
      name: tier.name,
      backends: tier.backends.map((backend) => ({
        address: backend.address,
        cluster: backend.cluster,
        inFlight: input.balancer.inFlight(backend.address),
        ejected: input.ejection.isEjected(backend.address),
        skipped: excluded.has(backend.address),
      })),
    })),
    ...(steered ? { steering: steered.steering } : {}),
    why: [...explainWhy(served, backends, chosen, selection, usable), ...(steered?.why ?? [])],
  };
}

function explainWhy(
  served: ServedRoute,
  backends: readonly { readonly share: number; readonly service?: string; readonly invalid?: string }[],
  chosen: number,
  selection: Selection,
  usable: number,
): string[] {
  const why: string[] = [];
  const stale = served.publishers
    .filter((publisher) => publisher.stale)
    .map((publisher) => publisher.cluster);
  if (served.failStatic)
    why.push(`every cluster is stale (${stale.join(", ")}): serving last known backends`);
  else if (stale.length > 0) why.push(`dropped stale clusters: ${stale.join(", ")}`);
  if (backends.length > 1) {
    const shares = backends.map(
      (backend) => `${backend.service ?? `invalid (${backend.invalid})`} ${percent(backend.share)}`,
    );
    why.push(`weights: ${shares.join(", ")}; showing backend ${chosen}, which most requests take`);
  }
  for (const choice of selection.clusters) {
    why.push(
      `${choice.cluster}: ${choice.family ?? "no family"} (${choice.reason})${choice.local ? ", local" : ""}`,
    );
  }
  why.push(`zone hints: ${selection.zoneHints}`);
  if (selection.addresses.length === 0) why.push("no endpoints: 503");
  else if (usable < selection.addresses.length) {
    why.push(`${selection.addresses.length - usable} of ${selection.addresses.length} backends ejected`);
  }
  return why;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

import { annotationRoute } from "../../store/legacy.js";
import { serviceId } from "../../store/names.js";
import { SCHEMA_VERSION } from "../../store/records.js";
import type { RouteRecord } from "../../store/routes.js";
import { exposeAnnotations } from "./exposure.js";
import { creationTimeOf } from "./gateway/objects.js";
import { type KubeService, namespaceOf } from "./kube-objects.js";

/**
 * Today's annotation exposure as a route record of schema version 2. The conversion lives in the store
 * (store/legacy.ts) because routers derive the same route from every version 1 record a sync not upgraded yet
 * still writes: one function, so a Service is routed alike before and after its sync is upgraded.
 */
export { annotationRoute } from "../../store/legacy.js";

export type AnnotationRouteResult =
  | { readonly kind: "route"; readonly route: RouteRecord }
  | { readonly kind: "not-exposed" }
  | { readonly kind: "invalid"; readonly reason: string };

export interface InvalidAnnotations {
  readonly service: string;
  readonly reason: string;
  /** Its last good route stays published. */
  readonly kept: boolean;
}

/** The Services' annotation routes; an invalid annotation keeps the route published before it, when there is one. */
export function annotationCandidates(input: {
  readonly services: readonly KubeService[];
  /** The annotation route of one Service; annotationRouteOf unless the caller memoises it. */
  readonly annotationRoute?: ((service: KubeService) => AnnotationRouteResult) | undefined;
  /** The stored route of id, kept while the annotations of its Service are invalid. */
  readonly kept?: ((id: string) => RouteRecord | undefined) | undefined;
}): {
  candidates: RouteRecord[];
  invalidAnnotations: InvalidAnnotations[];
} {
  const candidates: RouteRecord[] = [];
  const invalidAnnotations: InvalidAnnotations[] = [];
  const annotate = input.annotationRoute ?? annotationRouteOf;
  for (const service of input.services) {
    const result = annotate(service);
    if (result.kind === "route") candidates.push(result.route);
    else if (result.kind === "invalid") {
      const id = serviceId(namespaceOf(service), service.metadata.name);
      const kept = input.kept?.(annotationRouteIdOf(id));
      if (kept) candidates.push(kept);
      invalidAnnotations.push({ service: id, reason: result.reason, kept: kept !== undefined });
    }
  }
  return { candidates, invalidAnnotations };
}

/** A Service's annotation route: its annotations as a route record that ranks by its creationTimestamp. */
export function annotationRouteOf(service: KubeService): AnnotationRouteResult {
  const exposure = exposeAnnotations(service);
  if (exposure.kind !== "exposed") return exposure;
  const empty = { endpoints: [], fallback: false, draining: [] };
  const route = annotationRoute(
    {
      v: SCHEMA_VERSION,
      cluster: "",
      service: serviceId(namespaceOf(service), service.metadata.name),
      hosts: exposure.hosts,
      pathPrefix: exposure.pathPrefix,
      port: exposure.port,
      ipv4: empty,
      ipv6: empty,
    },
    creationTimeOf(service.metadata),
  );
  return { kind: "route", route };
}

function annotationRouteIdOf(service: string): string {
  return `annotation:${service}`;
}

import type { Result } from "../../lib/result.js";
import type { KubeEndpointSlice, KubeService } from "../translate/kube-objects.js";
import { emptyRouteObjects, type RouteObjects } from "../translate/route-objects.js";
import { KINDS, type Kind, ROUTE_OBJECT_LISTS } from "./kinds.js";

/** The objects a manifest folder holds, by kind; each list in the folder's sorted file order. */
export interface ManifestObjects {
  readonly services: KubeService[];
  readonly slices: KubeEndpointSlice[];
  /** Gateway API objects, Namespaces, IngressClasses and Ingresses. */
  readonly routeObjects: { -readonly [K in keyof RouteObjects]: RouteObjects[K][number][] };
}

export function emptyManifestObjects(): ManifestObjects {
  return { services: [], slices: [], routeObjects: emptyRouteObjects() };
}

/** Validates an object of `kind` (kinds.ts) and adds it to its list in `into`; the error when it does not validate. */
export function readManifestObject(kind: Kind, object: unknown, into: ManifestObjects): Result<void> {
  const parsed = KINDS[kind].parse(object);
  if (!parsed.ok) return parsed;
  listOf(kind, into).push(parsed.value);
  return { ok: true, value: undefined };
}

function listOf(kind: Kind, into: ManifestObjects): object[] {
  switch (kind) {
    case "Service":
      return into.services;
    case "EndpointSlice":
      return into.slices;
    default:
      // Each kind's parser gives the object type of its RouteObjects list (kinds.ts pairs them).
      return into.routeObjects[ROUTE_OBJECT_LISTS[kind]] as object[];
  }
}

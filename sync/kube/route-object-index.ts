import type { Logger } from "../../lib/logger.js";
import type { Result } from "../../lib/result.js";
import {
  parseGateway,
  parseGatewayClass,
  parseHTTPRoute,
  parseNamespace,
  parseReferenceGrant,
} from "../translate/gateway/objects.js";
import { parseIngress, parseIngressClass } from "../translate/ingress/objects.js";
import type { RouteObjects } from "../translate/route-objects.js";

/** The route-relevant kinds besides Services, with where the API serves them. */
export const ROUTE_KINDS = {
  GatewayClass: {
    group: "gateway.networking.k8s.io",
    version: "v1",
    resource: "gatewayclasses",
    namespaced: false,
  },
  Gateway: { group: "gateway.networking.k8s.io", version: "v1", resource: "gateways", namespaced: true },
  HTTPRoute: { group: "gateway.networking.k8s.io", version: "v1", resource: "httproutes", namespaced: true },
  ReferenceGrant: {
    group: "gateway.networking.k8s.io",
    version: "v1",
    resource: "referencegrants",
    namespaced: true,
  },
  Namespace: { group: "", version: "v1", resource: "namespaces", namespaced: false },
  IngressClass: { group: "networking.k8s.io", version: "v1", resource: "ingressclasses", namespaced: false },
  Ingress: { group: "networking.k8s.io", version: "v1", resource: "ingresses", namespaced: true },
} as const;

export type RouteKind = keyof typeof ROUTE_KINDS;

/** The collection path of `kind`, in `namespace` or cluster-wide (e.g. /apis/networking.k8s.io/v1/ingresses). */
export function collectionPath(kind: RouteKind, namespace?: string): string {
  const { group, version, resource } = ROUTE_KINDS[kind];
  const base = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const where = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${where}/${resource}`;
}

const PARSERS: Readonly<Record<RouteKind, (raw: unknown) => Result<object>>> = {
  GatewayClass: parseGatewayClass,
  Gateway: parseGateway,
  HTTPRoute: parseHTTPRoute,
  ReferenceGrant: parseReferenceGrant,
  Namespace: parseNamespace,
  IngressClass: parseIngressClass,
  Ingress: parseIngress,
};

/**
 * The validated cache of the route-relevant kinds, keyed by `namespace/name` (`/name` when cluster-scoped).
 * Objects keep every field the API server sent but managedFields (the status writer puts them back with their
 * status changed). One that fails validation is logged with its name and left out, as if deleted.
 */
export class RouteObjectIndex {
  readonly #objects = new Map<RouteKind, Map<string, object>>();
  #snapshot: RouteObjects | undefined;

  /** True when the cache changed. */
  upsert(kind: RouteKind, raw: unknown, logger: Logger): boolean {
    const key = keyOf(raw);
    if (key === undefined) {
      logger.warn(`skipping ${kind} without metadata.name`, { object: JSON.stringify(raw)?.slice(0, 200) });
      return false;
    }
    const parsed = PARSERS[kind](raw);
    if (!parsed.ok) {
      logger.warn(`skipping invalid ${kind}`, { object: key, error: parsed.error });
      return this.#forget(kind, key);
    }
    this.#map(kind).set(key, parsed.value);
    this.#snapshot = undefined;
    return true;
  }

  delete(kind: RouteKind, raw: unknown): boolean {
    const key = keyOf(raw);
    return key === undefined ? false : this.#forget(kind, key);
  }

  /** The object as cached (with its status and resourceVersion), for the status writer. */
  get(kind: RouteKind, namespace: string | undefined, name: string): object | undefined {
    return this.#objects.get(kind)?.get(`${namespace ?? ""}/${name}`);
  }

  objects(): RouteObjects {
    this.#snapshot ??= {
      gatewayClasses: this.#list("GatewayClass"),
      gateways: this.#list("Gateway"),
      httpRoutes: this.#list("HTTPRoute"),
      referenceGrants: this.#list("ReferenceGrant"),
      namespaces: this.#list("Namespace"),
      ingressClasses: this.#list("IngressClass"),
      ingresses: this.#list("Ingress"),
    } as RouteObjects;
    return this.#snapshot;
  }

  #map(kind: RouteKind): Map<string, object> {
    let map = this.#objects.get(kind);
    if (!map) {
      map = new Map();
      this.#objects.set(kind, map);
    }
    return map;
  }

  #list(kind: RouteKind): object[] {
    return [...(this.#objects.get(kind)?.values() ?? [])];
  }

  #forget(kind: RouteKind, key: string): boolean {
    const removed = this.#objects.get(kind)?.delete(key) ?? false;
    if (removed) this.#snapshot = undefined;
    return removed;
  }
}

function keyOf(raw: unknown): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const metadata = (raw as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  if (typeof metadata?.name !== "string" || metadata.name === "") return undefined;
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : "";
  return `${namespace}/${metadata.name}`;
}

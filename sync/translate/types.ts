import type { FamilyRecord } from "../../store/records.js";
import type { KubeEndpointSlice, KubeService } from "./kube-objects.js";
import type { RouteObjects } from "./route-objects.js";

/** Translation output for one Service port (docs/design.md, translation rules). */
export interface PortBackends {
  readonly port: { readonly name: string; readonly number: number; readonly protocol: string };
  readonly ipv4: FamilyRecord;
  readonly ipv6: FamilyRecord;
}

/**
 * Read access to the informer caches (or to manifests loaded from a folder): the reconciler recomputes a
 * Service's whole backend set from here on every event (rule 9), never from deltas.
 */
export interface ClusterCache {
  services(): readonly KubeService[];
  service(namespace: string, name: string): KubeService | undefined;
  /** Slices labelled `kubernetes.io/service-name=<name>` in `namespace`. */
  slicesOf(namespace: string, serviceName: string): readonly KubeEndpointSlice[];
  /**
   * Gateway API objects, Namespaces, IngressClasses and Ingresses; left out by a cache that holds none (then
   * only annotation routes are published).
   */
  routeObjects?(): RouteObjects;
}

/** What one Service becomes in the store, decided from its annotations (docs/routing.md, "Service annotations"). */
export type ExposureResult =
  | { readonly kind: "exposed"; readonly record: import("../../store/records.js").ServiceRecord }
  /** No `edgeslice.io/hosts` annotation: the Service is not routed; any stored record must go. */
  | { readonly kind: "not-exposed" }
  /** Annotations present but malformed: log `reason`, keep serving everything else. */
  | { readonly kind: "invalid"; readonly reason: string };

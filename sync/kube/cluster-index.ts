import type { Logger } from "../../lib/logger.js";
import type { WarnOnce } from "../../lib/warn-once.js";
import {
  endpointSliceProblems,
  type KubeEndpointSlice,
  type KubeService,
  parseEndpointSlice,
  parseService,
  SERVICE_NAME_LABEL,
} from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";
import { labelOf, type ObjectRef, refKey } from "./object-refs.js";
import { type CacheChange, ValidatedCache } from "./validated-cache.js";

/** A Service by namespace and name. */
export type ServiceRef = ObjectRef;

/**
 * The validated cache behind the informers (validated-cache.ts), with slices indexed by (namespace,
 * kubernetes.io/service-name). Every change takes the raw object an informer delivered and answers which
 * Services it touched.
 */
export class ClusterIndex implements ClusterCache {
  /** Slices whose endpoints translation drops (docs/design.md, translation rules 3-4): reported once per slice while they stay so. */
  private readonly sliceWarnings: WarnOnce | undefined;
  private readonly servicesCache = new ValidatedCache("Service", true, parseService);
  private readonly slicesCache = new ValidatedCache("EndpointSlice", true, parseEndpointSlice);
  private readonly sliceKeysByService = new Map<string, Set<string>>();

  constructor(sliceWarnings?: WarnOnce) {
    this.sliceWarnings = sliceWarnings;
  }

  services(): readonly KubeService[] {
    return this.servicesCache.values();
  }

  service(namespace: string, name: string): KubeService | undefined {
    return this.servicesCache.get({ namespace, name });
  }

  slicesOf(namespace: string, serviceName: string): readonly KubeEndpointSlice[] {
    const keys = this.sliceKeysByService.get(refKey({ namespace, name: serviceName }));
    if (!keys) return [];
    const slices: KubeEndpointSlice[] = [];
    for (const key of keys) {
      const [sliceNamespace = "", name = ""] = key.split("/");
      const slice = this.slicesCache.get({ namespace: sliceNamespace, name });
      if (slice) slices.push(slice);
    }
    return slices;
  }

  upsertService(raw: unknown, logger: Logger): ServiceRef[] {
    const change = this.servicesCache.upsert(raw, logger);
    // A Service that turned invalid leaves the cache: the reconciler sees it gone, as for a delete.
    return change && (change.current || change.previous) ? [change.ref] : [];
  }

  deleteService(raw: unknown): ServiceRef[] {
    const change = this.servicesCache.delete(raw);
    return change ? [change.ref] : [];
  }

  upsertSlice(raw: unknown, logger: Logger): ServiceRef[] {
    const change = this.slicesCache.upsert(raw, logger);
    if (!change) return [];
    if (change.current) this.reportDroppedEndpoints(change.ref, change.current);
    return this.reindex(change);
  }

  deleteSlice(raw: unknown): ServiceRef[] {
    const change = this.slicesCache.delete(raw);
    if (!change) return [];
    this.sliceWarnings?.clear(`slice ${refKey(change.ref)}`);
    const labelled = labelOf(raw, SERVICE_NAME_LABEL);
    const fromLabel = labelled ? [{ namespace: change.ref.namespace, name: labelled }] : [];
    return uniqueRefs([...this.reindex(change), ...fromLabel]);
  }

  private reportDroppedEndpoints(ref: ServiceRef, slice: KubeEndpointSlice): void {
    if (!this.sliceWarnings) return;
    const key = `slice ${refKey(ref)}`;
    const problems = endpointSliceProblems(slice);
    if (problems.length === 0) {
      this.sliceWarnings.clear(key);
      return;
    }
    this.sliceWarnings.warn(key, problems.join("; "), "dropping endpoints of an EndpointSlice", {
      namespace: ref.namespace,
      name: ref.name,
      problems,
    });
  }

  /** Moves the slice from its previous Service's index to its current one's; returns both Services. */
  private reindex(change: CacheChange<KubeEndpointSlice>): ServiceRef[] {
    const key = refKey(change.ref);
    const before = ownerOf(change.ref, change.previous);
    const after = ownerOf(change.ref, change.current);
    if (before) {
      const ownerKey = refKey(before);
      const keys = this.sliceKeysByService.get(ownerKey);
      keys?.delete(key);
      if (keys && keys.size === 0) this.sliceKeysByService.delete(ownerKey);
    }
    if (after) {
      const ownerKey = refKey(after);
      const keys = this.sliceKeysByService.get(ownerKey) ?? new Set<string>();
      keys.add(key);
      this.sliceKeysByService.set(ownerKey, keys);
    }
    return uniqueRefs([...(before ? [before] : []), ...(after ? [after] : [])]);
  }
}

function ownerOf(ref: ServiceRef, slice: KubeEndpointSlice | undefined): ServiceRef | undefined {
  const serviceName = slice?.metadata.labels?.[SERVICE_NAME_LABEL];
  return serviceName ? { namespace: ref.namespace, name: serviceName } : undefined;
}

function uniqueRefs(refs: readonly ServiceRef[]): ServiceRef[] {
  const seen = new Map<string, ServiceRef>();
  for (const ref of refs) seen.set(refKey(ref), ref);
  return [...seen.values()];
}

import type { Logger } from "../../lib/logger.js";
import type { WarnOnce } from "../../lib/warn-once.js";
import {
  endpointSliceProblems,
  type KubeEndpointSlice,
  type KubeService,
  namespaceOf,
  parseEndpointSlice,
  parseService,
  SERVICE_NAME_LABEL,
} from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";

/** A Service by namespace and name. */
export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The validated cache behind the informers, with slices indexed by (namespace, kubernetes.io/service-name).
 * Every change takes the raw object an informer delivered and answers which Services it touched. An object
 * that fails validation is logged with its namespace/name and left out; a cached one that turns invalid
 * leaves the cache, as if deleted.
 */
export class ClusterIndex implements ClusterCache {
  /** Slices whose endpoints translation drops (docs/design.md, translation rules 3-4): reported once per slice while they stay so. */
  private readonly sliceWarnings: WarnOnce | undefined;
  private readonly servicesByKey = new Map<string, KubeService>();
  private readonly slicesByKey = new Map<
    string,
    { slice: KubeEndpointSlice; owner: ServiceRef | undefined }
  >();
  private readonly sliceKeysByService = new Map<string, Set<string>>();

  constructor(sliceWarnings?: WarnOnce) {
    this.sliceWarnings = sliceWarnings;
  }

  services(): readonly KubeService[] {
    return [...this.servicesByKey.values()];
  }

  service(namespace: string, name: string): KubeService | undefined {
    return this.servicesByKey.get(refKey({ namespace, name }));
  }

  slicesOf(namespace: string, serviceName: string): readonly KubeEndpointSlice[] {
    const keys = this.sliceKeysByService.get(refKey({ namespace, name: serviceName }));
    if (!keys) return [];
    const slices: KubeEndpointSlice[] = [];
    for (const key of keys) {
      const entry = this.slicesByKey.get(key);
      if (entry) slices.push(entry.slice);
    }
    return slices;
  }

  upsertService(raw: unknown, logger: Logger): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return invalidIdentity("Service", raw, logger);
    const parsed = parseService(raw);
    if (!parsed.ok) {
      logger.warn("skipping invalid Service", {
        namespace: ref.namespace,
        name: ref.name,
        error: parsed.error,
      });
      // A Service that turned invalid leaves the cache: the reconciler sees it gone, as for a delete.
      return this.servicesByKey.delete(refKey(ref)) ? [ref] : [];
    }
    this.servicesByKey.set(refKey(ref), parsed.value);
    return [ref];
  }

  deleteService(raw: unknown): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return [];
    this.servicesByKey.delete(refKey(ref));
    return [ref];
  }

  upsertSlice(raw: unknown, logger: Logger): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return invalidIdentity("EndpointSlice", raw, logger);
    const parsed = parseEndpointSlice(raw);
    if (!parsed.ok) {
      logger.warn("skipping invalid EndpointSlice", {
        namespace: ref.namespace,
        name: ref.name,
        error: parsed.error,
      });
      return this.forgetSlice(ref);
    }
    const slice = parsed.value;
    this.reportDroppedEndpoints(ref, slice);
    const serviceName = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    const owner = serviceName ? { namespace: ref.namespace, name: serviceName } : undefined;
    const previous = this.forgetSlice(ref);
    const key = refKey(ref);
    this.slicesByKey.set(key, { slice, owner });
    if (owner) {
      const ownerKey = refKey(owner);
      const keys = this.sliceKeysByService.get(ownerKey) ?? new Set<string>();
      keys.add(key);
      this.sliceKeysByService.set(ownerKey, keys);
    }
    return uniqueRefs([...previous, ...(owner ? [owner] : [])]);
  }

  deleteSlice(raw: unknown): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return [];
    this.sliceWarnings?.clear(`slice ${refKey(ref)}`);
    const labelled = labelOf(raw, SERVICE_NAME_LABEL);
    const fromLabel = labelled ? [{ namespace: ref.namespace, name: labelled }] : [];
    return uniqueRefs([...this.forgetSlice(ref), ...fromLabel]);
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

  /** Removes a slice; returns the Service it belonged to, if any. */
  private forgetSlice(ref: ServiceRef): ServiceRef[] {
    const key = refKey(ref);
    const entry = this.slicesByKey.get(key);
    if (!entry) return [];
    this.slicesByKey.delete(key);
    if (!entry.owner) return [];
    const ownerKey = refKey(entry.owner);
    const keys = this.sliceKeysByService.get(ownerKey);
    keys?.delete(key);
    if (keys && keys.size === 0) this.sliceKeysByService.delete(ownerKey);
    return [entry.owner];
  }
}

function refKey(ref: ServiceRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function uniqueRefs(refs: readonly ServiceRef[]): ServiceRef[] {
  const seen = new Map<string, ServiceRef>();
  for (const ref of refs) seen.set(refKey(ref), ref);
  return [...seen.values()];
}

function metadataOf(raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const metadata = (raw as { metadata?: unknown }).metadata;
  return typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)
    : undefined;
}

function identify(raw: unknown): ServiceRef | undefined {
  const metadata = metadataOf(raw);
  const name = metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const namespace = typeof metadata?.namespace === "string" ? metadata.namespace : undefined;
  return { namespace: namespaceOf({ metadata: { namespace: namespace ?? null } }), name };
}

function labelOf(raw: unknown, label: string): string | undefined {
  const labels = metadataOf(raw)?.labels;
  if (typeof labels !== "object" || labels === null) return undefined;
  const value = (labels as Record<string, unknown>)[label];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function invalidIdentity(kind: string, raw: unknown, logger: Logger): ServiceRef[] {
  logger.warn(`skipping ${kind} without metadata.name`, { object: JSON.stringify(raw)?.slice(0, 200) });
  return [];
}

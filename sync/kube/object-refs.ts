/** An object by namespace and name; cluster-scoped objects have the namespace "". */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/** `namespace/name`: the one key the caches and reflectors file objects under. */
export function refKey(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** The object's metadata, or undefined when it has none (such an object cannot be filed). */
export function metadataOf(object: unknown): Record<string, unknown> | undefined {
  if (typeof object !== "object" || object === null) return undefined;
  const metadata = (object as { metadata?: unknown }).metadata;
  return typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)
    : undefined;
}

/**
 * The object's namespace and name, or undefined without a name. A namespaced object with no namespace is in
 * "default", as the API server and kubectl place it; a cluster-scoped one has "".
 */
export function refOf(object: unknown, namespaced: boolean): ObjectRef | undefined {
  const metadata = metadataOf(object);
  const name = metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  if (!namespaced) return { namespace: "", name };
  const namespace = metadata?.namespace;
  return { namespace: typeof namespace === "string" && namespace !== "" ? namespace : "default", name };
}

/** A label's value when it is a non-empty string. */
export function labelOf(object: unknown, label: string): string | undefined {
  const labels = metadataOf(object)?.labels;
  if (typeof labels !== "object" || labels === null) return undefined;
  const value = (labels as Record<string, unknown>)[label];
  return typeof value === "string" && value !== "" ? value : undefined;
}

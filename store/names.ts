import * as v from "valibot";

/**
 * Cluster names end up inside Redis keys, hash tags and ACL key patterns, so they are limited to
 * DNS-1123 label characters: no `{`, `}`, glob characters or separators can leak into a key.
 */
export const ClusterNameSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "cluster name must be a DNS-1123 label (a-z, 0-9, '-')"),
);

/** The key prefix shares the cluster name's restrictions plus ':' and '.', for namespacing like `team:edgeslice`. */
export const PrefixSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, "prefix must be 1-64 of A-Z a-z 0-9 _ . : -"),
);

export const DEFAULT_PREFIX = "edgeslice";

/** `namespace/name` of a Service. */
export const ServiceIdSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?\/[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, "service must be namespace/name"),
);

export function serviceId(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

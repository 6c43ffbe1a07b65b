/** Request paths as route records read them: shared by matching (functions/core/routes/) and filters/. */

/** The path of an origin-form target, without its query. */
export function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query < 0 ? target : target.slice(0, query);
}

/**
 * A PathPrefix value without its trailing slashes: Gateway API HTTPPathMatch says "a trailing `/` is
 * ignored", and Ingress `Prefix` matches element-wise the same way, so `/abc/` and `/abc` are one prefix.
 */
export function normalisePathPrefix(value: string): string {
  if (value.length <= 1 || !value.endsWith("/")) return value;
  const trimmed = value.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}

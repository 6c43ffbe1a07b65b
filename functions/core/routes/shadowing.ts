import { normalisePathPrefix } from "../../../store/paths.js";
import type { RouteMatch, RouteRecord } from "../../../store/routes.js";
import type { RouteMatchResult, RouteTable } from "./route-table.js";

/**
 * The other routes of the winning match's host bucket that ask for exactly the same request (path, method
 * and headers) and lose to it on precedence: they can never be served for these hosts. For explain: two routes
 * claiming one host and path is usually a mistake, and the Gateway API's tie-breaks (oldest, then
 * namespace/name) decide silently.
 */
export function shadowedBy<T extends { readonly route: RouteRecord }>(
  table: RouteTable<T>,
  host: string,
  found: RouteMatchResult<T>,
): T[] {
  const bucket =
    found.hostname === undefined
      ? table.anyHost
      : found.hostname.startsWith("*.")
        ? table.wildcard.get(found.hostname.slice(2))
        : table.exact.get(host);
  const shadowed: T[] = [];
  for (const candidate of bucket ?? []) {
    if (candidate.entry === found.entry || shadowed.includes(candidate.entry)) continue;
    if (sameRequest(candidate.match, found.match)) shadowed.push(candidate.entry);
  }
  return shadowed;
}

/** Two matches that accept exactly the same requests. */
export function sameRequest(a: RouteMatch, b: RouteMatch): boolean {
  if (a.path.type !== b.path.type || a.method !== b.method || a.headers.length !== b.headers.length)
    return false;
  const value = (match: RouteMatch) =>
    match.path.type === "PathPrefix" ? normalisePathPrefix(match.path.value) : match.path.value;
  if (value(a) !== value(b)) return false;
  const wanted = new Set(a.headers.map((header) => `${header.name}\u0000${header.value}`));
  return b.headers.every((header) => wanted.has(`${header.name}\u0000${header.value}`));
}

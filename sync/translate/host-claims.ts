import type { Result } from "../../lib/result.js";

/**
 * HOST_CLAIMS: which namespaces may claim which hosts, e.g. `payments=pay.test,*.pay.test;shop=shop.test`.
 * Entries are `namespace=pattern,pattern` separated by ";". A pattern is a host name (that host only), `*.`
 * and a name (every host and wildcard below that name, at any depth, not the name itself), or `*` (every
 * host, and routes without hostnames, which serve every host). The namespace `*` gives its patterns to every
 * namespace. Once the setting is set, a namespace it does not list may claim nothing; unset, anyone may claim
 * anything. A refused host is left out of the route (a route left with none is not published) and reported.
 */
export interface HostClaims {
  /** Patterns by namespace; `*` applies to every namespace. */
  readonly byNamespace: ReadonlyMap<string, readonly string[]>;
}

const NAMESPACE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|\*)$/;
const PATTERN = /^(\*|(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)$/;

/** Parses HOST_CLAIMS; undefined (unset or blank) means no restriction. */
export function parseHostClaims(text: string | undefined): Result<HostClaims | undefined> {
  if (text === undefined || text.trim() === "") return { ok: true, value: undefined };
  const byNamespace = new Map<string, string[]>();
  for (const entry of text.split(";")) {
    if (entry.trim() === "") continue;
    const equals = entry.indexOf("=");
    if (equals < 0) return { ok: false, error: `"${entry.trim()}" is not namespace=pattern,...` };
    const namespace = entry.slice(0, equals).trim();
    if (!NAMESPACE.test(namespace))
      return { ok: false, error: `"${namespace}" is not a namespace name or *` };
    const patterns = byNamespace.get(namespace) ?? [];
    for (const raw of entry.slice(equals + 1).split(",")) {
      const pattern = raw.trim().toLowerCase();
      if (pattern === "") continue;
      if (!PATTERN.test(pattern)) {
        return { ok: false, error: `"${pattern}" (for ${namespace}) is not a host name, *.name or *` };
      }
      if (!patterns.includes(pattern)) patterns.push(pattern);
    }
    byNamespace.set(namespace, patterns);
  }
  return { ok: true, value: { byNamespace } };
}

/**
 * Whether `namespace` may claim `host` (a host name, a `*.` wildcard, or undefined for a route without
 * hostnames). Without claims everything is allowed.
 */
export function mayClaim(
  claims: HostClaims | undefined,
  namespace: string,
  host: string | undefined,
): boolean {
  if (claims === undefined) return true;
  const patterns = [...(claims.byNamespace.get(namespace) ?? []), ...(claims.byNamespace.get("*") ?? [])];
  return patterns.some((pattern) => covers(pattern, host));
}

function covers(pattern: string, host: string | undefined): boolean {
  if (pattern === "*") return true;
  if (host === undefined) return false;
  if (!pattern.startsWith("*.")) return host === pattern;
  const suffix = pattern.slice(1);
  const name = host.startsWith("*.") ? host.slice(1) : host;
  return name === suffix || (name.length > suffix.length && name.endsWith(suffix));
}

/**
 * Hostname intersection between a listener and an HTTPRoute (gateway.networking.k8s.io/v1
 * HTTPRoute.spec.hostnames and Listener.hostname). A `*.` wildcard covers one or more labels: `*.example.com`
 * matches `test.example.com` and `foo.test.example.com`, never `example.com`.
 */

/** Every host, or these host patterns; an empty list means no host at all. */
export type HostnameSet = "any" | readonly string[];

/** True when the wildcard `*.suffix` covers `hostname` (a name or a narrower wildcard). */
function covers(wildcard: string, hostname: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  return hostname.length > suffix.length && hostname.endsWith(suffix);
}

/**
 * The more specific of two hostnames when one covers the other, else undefined. A listener without a
 * hostname takes the route's as it is. Examples (Listener, route): (`test.example.com`, `*.example.com`) →
 * `test.example.com`; (`*.example.com`, `foo.test.example.com`) → `foo.test.example.com`;
 * (`*.example.com`, `*.test.example.com`) → `*.test.example.com`; (`*.example.com`, `example.com`) → none.
 */
export function intersectHostname(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined) return route;
  if (listener === route) return route;
  const listenerWild = listener.startsWith("*.");
  const routeWild = route.startsWith("*.");
  if (listenerWild && covers(listener, route)) return route;
  if (routeWild && covers(route, listener)) return listener;
  return undefined;
}

/**
 * The hosts a route serves through one listener. "If both the Listener and HTTPRoute have specified
 * hostnames, any HTTPRoute hostnames that do not match the Listener hostname MUST be ignored"; a route
 * without hostnames takes the listener's; neither → every host. An empty result means the route does not
 * attach to this listener (NoMatchingListenerHostname).
 */
export function hostnamesThroughListener(
  listener: string | null | undefined,
  route: readonly string[],
): HostnameSet {
  const listenerHost = listener ? listener.toLowerCase() : undefined;
  if (route.length === 0) return listenerHost === undefined ? "any" : [listenerHost];
  const found = new Set<string>();
  for (const hostname of route) {
    const both = intersectHostname(listenerHost, hostname.toLowerCase());
    if (both !== undefined) found.add(both);
  }
  return [...found];
}

/** Union over the listeners a route attached to; "any" absorbs everything. Sorted for stable output. */
export function unionHostnames(sets: readonly HostnameSet[]): HostnameSet {
  const all = new Set<string>();
  for (const set of sets) {
    if (set === "any") return "any";
    for (const hostname of set) all.add(hostname);
  }
  return [...all].sort();
}

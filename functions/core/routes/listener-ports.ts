import type { RouteRecord } from "../../../store/routes.js";

/**
 * One listener a route is served through on this router: its Gateway, port and own hostname ("" for none), and
 * the clusters that publish it (those serving the route): a cluster's listeners decide listener isolation for
 * its own routes only, never for another cluster's (CLUSTER_GRANTS: what one cluster publishes cannot take
 * another's hosts away).
 */
export interface ServedListener {
  readonly gateway: string;
  readonly port: number;
  readonly listenerHostname: string;
  readonly clusters: readonly string[];
}

/**
 * The listeners a route is served through, per host pattern of the route (undefined: its catch-all bucket),
 * counting only the listeners of the Gateways this router implements. Undefined for a route that names no
 * listeners (annotations, Ingresses, records of an older sync): every port. A host pattern absent from the
 * map is served through none of this router's listeners. A listener entry without hostnames serves every
 * hostname of the route. `clusters`: those serving the route ([""] where routes carry none, as in tables
 * built from bare records).
 */
export function servedListeners(
  route: RouteRecord,
  gateways: ReadonlySet<string> | undefined,
  clusters: readonly string[],
): ReadonlyMap<string | undefined, readonly ServedListener[]> | undefined {
  if (route.listeners === undefined) return undefined;
  const served = new Map<string | undefined, ServedListener[]>();
  const keys = route.hostnames.length === 0 ? [undefined] : route.hostnames;
  for (const listener of route.listeners) {
    if (gateways !== undefined && !gateways.has(listener.gateway)) continue;
    const entry = {
      gateway: listener.gateway,
      port: listener.port,
      listenerHostname: listener.listenerHostname ?? "",
      clusters,
    };
    for (const key of keys) {
      if (listener.hostnames.length > 0 && (key === undefined || !listener.hostnames.includes(key))) continue;
      const list = served.get(key) ?? [];
      list.push(entry);
      served.set(key, list);
    }
  }
  return served;
}

/**
 * The hostnames of the listeners in use, per pool (listenerPoolKey: one cluster's listeners of one Gateway and
 * port), for listener isolation (listenerServes) and misdirected requests (core/tls/misdirected.ts).
 */
export type ListenerHostnames = ReadonlyMap<string, readonly string[]>;

/** The pool of one cluster's listeners of one Gateway on one port. */
export function listenerPoolKey(cluster: string, gateway: string, port: number): string {
  return `${gateway} ${port}\u0000${cluster}`;
}

/** The parts of a pool key (listenerPoolKey). */
export function listenerPoolOf(key: string): { gateway: string; port: number; cluster: string } {
  const nul = key.indexOf("\u0000");
  const head = key.slice(0, nul);
  const space = head.lastIndexOf(" ");
  return { gateway: head.slice(0, space), port: Number(head.slice(space + 1)), cluster: key.slice(nul + 1) };
}

/**
 * Whether a request for `host` to `port` is served through one of `listeners`. The port: a Host without one
 * was addressed to the scheme's default, and the router cannot tell which scheme when TLS ended before it,
 * so 80 and 443 both count. Listener isolation (GatewayHTTPListenerIsolation): among the listeners of one
 * Gateway and port, a request belongs to the one whose hostname matches it most specifically (the exact name,
 * then the longest wildcard, then the listener without a hostname), and only that listener's routes serve it.
 * The listeners compared are those of the clusters serving the route (the union when several do).
 */
export function listenerServes(
  listeners: readonly ServedListener[],
  all: ListenerHostnames,
  host: string,
  port: number | undefined,
): boolean {
  for (const listener of listeners) {
    if (port === undefined ? listener.port !== 80 && listener.port !== 443 : listener.port !== port) continue;
    let best: string | undefined;
    for (const cluster of listener.clusters) {
      const hostnames = all.get(listenerPoolKey(cluster, listener.gateway, listener.port)) ?? [];
      best = moreSpecific(best, mostSpecificListener(hostnames, host));
    }
    if (best === listener.listenerHostname) return true;
  }
  return false;
}

/**
 * The hostname of the listener among `hostnames` a request for `host` belongs to: the exact name, else the
 * longest wildcard covering it, else "" (a listener without hostname); undefined when none accepts it.
 */
export function mostSpecificListener(hostnames: readonly string[], host: string): string | undefined {
  let best: string | undefined;
  for (const hostname of hostnames) {
    if (hostname === host) return hostname;
    if (hostname.startsWith("*.") && host.endsWith(hostname.slice(1)) && host.length > hostname.length - 1) {
      if (best === undefined || best === "" || hostname.length > best.length) best = hostname;
    } else if (hostname === "" && best === undefined) best = "";
  }
  return best;
}

/** The more specific of two listener hostnames that both accept one host (as mostSpecificListener ranks). */
function moreSpecific(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  if (a === "" || b === "") return a === "" ? b : a;
  if (!a.startsWith("*.")) return a;
  if (!b.startsWith("*.")) return b;
  return b.length > a.length ? b : a;
}

/**
 * The port a request counts as addressed to: the Host's port when some listener uses it; otherwise the
 * router was reached at its own port (PORT, a node port, `npm start`'s 8080) rather than at a listener's,
 * and the request counts as made to the scheme's default, as it did before routes named their listeners.
 */
export function effectivePort(
  listenerPorts: ReadonlySet<number>,
  port: number | undefined,
): number | undefined {
  return port !== undefined && listenerPorts.has(port) ? port : undefined;
}

import type { RouteRecord } from "../../../store/routes.js";

/** One listener a route is served through on this router: its Gateway, port and own hostname ("" for none). */
export interface ServedListener {
  readonly gateway: string;
  readonly port: number;
  readonly listenerHostname: string;
}

/**
 * The listeners a route is served through, per host pattern of the route (undefined: its catch-all bucket),
 * counting only the listeners of the Gateways this router implements. Undefined for a route that names no
 * listeners (annotations, Ingresses, records of an older sync): every port. A host pattern absent from the
 * map is served through none of this router's listeners. A listener entry without hostnames serves every
 * hostname of the route.
 */
export function servedListeners(
  route: RouteRecord,
  gateways: ReadonlySet<string> | undefined,
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

/** The hostnames of every listener per `gateway port`, for listener isolation (listenerServes). */
export type ListenerHostnames = ReadonlyMap<string, readonly string[]>;

export function listenerKey(gateway: string, port: number): string {
  return `${gateway} ${port}`;
}

/**
 * Whether a request for `host` to `port` is served through one of `listeners`. The port: a Host without one
 * was addressed to the scheme's default, and the router cannot tell which scheme when TLS ended before it,
 * so 80 and 443 both count. Listener isolation (GatewayHTTPListenerIsolation): among the listeners of one
 * Gateway and port, a request belongs to the one whose hostname matches it most specifically (the exact name,
 * then the longest wildcard, then the listener without a hostname), and only that listener's routes serve it.
 */
export function listenerServes(
  listeners: readonly ServedListener[],
  all: ListenerHostnames,
  host: string,
  port: number | undefined,
): boolean {
  for (const listener of listeners) {
    if (port === undefined ? listener.port !== 80 && listener.port !== 443 : listener.port !== port) continue;
    const hostnames = all.get(listenerKey(listener.gateway, listener.port)) ?? [];
    if (mostSpecific(hostnames, host) === listener.listenerHostname) return true;
  }
  return false;
}

function mostSpecific(hostnames: readonly string[], host: string): string | undefined {
  let best: string | undefined;
  for (const hostname of hostnames) {
    if (hostname === host) return hostname;
    if (hostname.startsWith("*.") && host.endsWith(hostname.slice(1)) && host.length > hostname.length - 1) {
      if (best === undefined || best === "" || hostname.length > best.length) best = hostname;
    } else if (hostname === "" && best === undefined) best = "";
  }
  return best;
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

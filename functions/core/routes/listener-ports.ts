import type { RouteRecord } from "../../../store/routes.js";

/**
 * Which listener ports a route is served on, per host pattern of the route (undefined: its catch-all
 * bucket), counting only the listeners of the Gateways this router implements. Undefined for a route that
 * names no listeners (annotations, Ingresses, records of an older sync): every port. A host pattern absent
 * from the map is served through none of this router's listeners.
 *
 * A listener without hostnames in the record serves every hostname of the route. Gateway API Listener.port:
 * a route attached to a listener on 8080 is not reachable on 80, so two Gateways (or two listeners) on one
 * router keep their routes apart by the port the client addressed.
 */
export function listenerPorts(
  route: RouteRecord,
  gateways: ReadonlySet<string> | undefined,
): ReadonlyMap<string | undefined, ReadonlySet<number>> | undefined {
  if (route.listeners === undefined) return undefined;
  const ports = new Map<string | undefined, Set<number>>();
  const add = (hostname: string | undefined, port: number) => {
    const set = ports.get(hostname) ?? new Set<number>();
    set.add(port);
    ports.set(hostname, set);
  };
  const keys = route.hostnames.length === 0 ? [undefined] : route.hostnames;
  for (const listener of route.listeners) {
    if (gateways !== undefined && !gateways.has(listener.gateway)) continue;
    for (const key of keys) {
      if (listener.hostnames.length === 0 || (key !== undefined && listener.hostnames.includes(key))) {
        add(key, listener.port);
      }
    }
  }
  return ports;
}

/**
 * Whether a request to `port` reaches a listener on one of `ports`. A Host without a port was addressed to
 * the scheme's default; the router cannot tell which scheme when TLS ended before it, so 80 and 443 both
 * count.
 */
export function portAccepted(ports: ReadonlySet<number>, port: number | undefined): boolean {
  if (port === undefined) return ports.has(80) || ports.has(443);
  return ports.has(port);
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

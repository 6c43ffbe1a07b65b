import type { ListenerHostnames } from "./listener-ports.js";
import type { ListenerUse, PooledListener } from "./route-candidates.js";

/**
 * How many routes of a route table are served through each listener, by listener use key
 * (route-candidates.ts listenerUseKey): a build counts them, an update moves the counts of the routes it
 * replaces, and the listeners in use give the table its ports and per-pool hostnames.
 */
export type ListenerUses = Map<string, { listener: PooledListener; routes: number }>;

/** Adds (`by` 1) or takes away (-1) one route's listener uses. */
export function countListeners(uses: ListenerUses, listeners: readonly ListenerUse[], by: 1 | -1): void {
  for (const { key, listener } of listeners) {
    const routes = (uses.get(key)?.routes ?? 0) + by;
    if (routes > 0) uses.set(key, { listener, routes });
    else uses.delete(key);
  }
}

/** The ports and per-pool hostnames of the listeners in use. */
export function listenersOf(uses: ReadonlyMap<string, { readonly listener: PooledListener }>): {
  readonly listenerPorts: ReadonlySet<number>;
  readonly listenerHostnames: ListenerHostnames;
} {
  const ports = new Set<number>();
  const hostnames = new Map<string, string[]>();
  for (const { listener } of uses.values()) {
    ports.add(listener.port);
    const known = hostnames.get(listener.pool);
    if (known) known.push(listener.listenerHostname);
    else hostnames.set(listener.pool, [listener.listenerHostname]);
  }
  return { listenerPorts: ports, listenerHostnames: hostnames };
}

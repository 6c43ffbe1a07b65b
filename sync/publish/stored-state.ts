import { decodeRoute, type RouteRecord } from "../../store/routes.js";
import type { StoredRecords } from "../../store/store.js";

type Ref = { readonly service: string; readonly port: number };

/**
 * What the store holds for this cluster, as the reconciler last wrote or loaded it: both hashes as serialised
 * strings, with two indexes the write order needs, the port numbers each stored service record serves and
 * the (service, port) pairs each stored route references.
 */
export class StoredState {
  readonly services = new Map<string, string>();
  /** Version 2 routes by id; a version 1 sync's routes (keyed by service) are left to the service writes. */
  readonly routes = new Map<string, string>();
  readonly #servicePorts = new Map<string, ReadonlySet<number>>();
  readonly #routeRefs = new Map<string, readonly Ref[]>();
  readonly #referenced = new Map<string, Map<number, number>>();
  readonly #decoded = new Map<string, RouteRecord | undefined>();

  static from(loaded: StoredRecords): StoredState {
    const state = new StoredState();
    for (const [service, raw] of loaded.services) state.setService(service, raw);
    for (const [id, raw] of loaded.routes) {
      // Route ids always hold a ":"; a field without one is a version 1 sync's route of that service.
      if (id.includes(":")) state.setRoute(id, raw);
    }
    return state;
  }

  setService(service: string, raw: string): void {
    this.services.set(service, raw);
    this.#servicePorts.set(service, portsOfRecord(raw));
  }

  deleteService(service: string): void {
    this.services.delete(service);
    this.#servicePorts.delete(service);
  }

  /** Port numbers the stored record of `service` serves (version 1 or 2); empty when none is stored. */
  servicePorts(service: string): ReadonlySet<number> {
    return this.#servicePorts.get(service) ?? EMPTY;
  }

  setRoute(id: string, raw: string, route?: RouteRecord): void {
    this.deleteRoute(id);
    this.routes.set(id, raw);
    const decoded = route ?? decodedRoute(raw);
    this.#decoded.set(id, decoded);
    const refs = decoded ? refsOf(decoded) : [];
    this.#routeRefs.set(id, refs);
    for (const ref of refs) {
      const ports = this.#referenced.get(ref.service) ?? new Map<number, number>();
      ports.set(ref.port, (ports.get(ref.port) ?? 0) + 1);
      this.#referenced.set(ref.service, ports);
    }
  }

  deleteRoute(id: string): void {
    for (const ref of this.#routeRefs.get(id) ?? []) {
      const ports = this.#referenced.get(ref.service);
      const count = (ports?.get(ref.port) ?? 0) - 1;
      if (count > 0) ports?.set(ref.port, count);
      else ports?.delete(ref.port);
      if (ports?.size === 0) this.#referenced.delete(ref.service);
    }
    this.routes.delete(id);
    this.#routeRefs.delete(id);
    this.#decoded.delete(id);
  }

  /** The stored route of `id`, decoded; undefined when none is stored or it does not decode. */
  route(id: string): RouteRecord | undefined {
    return this.#decoded.get(id);
  }

  /** (service, port) pairs the stored route `id` references. */
  routeRefs(id: string): readonly Ref[] {
    return this.#routeRefs.get(id) ?? [];
  }

  /** Port numbers of `service` some stored route references. */
  referencedPorts(service: string): ReadonlySet<number> {
    const ports = this.#referenced.get(service);
    return ports ? new Set(ports.keys()) : EMPTY;
  }
}

const EMPTY: ReadonlySet<number> = new Set();

export function refsOf(route: RouteRecord): Ref[] {
  const refs = new Map<string, Ref>();
  for (const rule of route.rules) {
    for (const backend of rule.backends) {
      if ("service" in backend) refs.set(`${backend.service} ${backend.port}`, backend);
    }
  }
  return [...refs.values()].map(({ service, port }) => ({ service, port }));
}

function decodedRoute(raw: string): RouteRecord | undefined {
  const decoded = decodeRoute(raw);
  return decoded.ok ? decoded.value : undefined;
}

/** The port numbers a stored service record serves, whatever its version; none when it does not parse. */
function portsOfRecord(raw: string): ReadonlySet<number> {
  try {
    const parsed = JSON.parse(raw) as {
      v?: unknown;
      port?: { number?: unknown };
      ports?: { number?: unknown }[];
    };
    if (parsed.v === 1 && typeof parsed.port?.number === "number") return new Set([parsed.port.number]);
    if (parsed.v === 2 && Array.isArray(parsed.ports)) {
      return new Set(parsed.ports.flatMap((port) => (typeof port?.number === "number" ? [port.number] : [])));
    }
  } catch {
    // Unparsable: serves nothing, and the next write replaces it.
  }
  return EMPTY;
}

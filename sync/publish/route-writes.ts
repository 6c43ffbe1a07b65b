import type { ClusterWriter } from "../../store/store.js";
import type { DesiredRoute } from "./desired-state.js";
import { refsOf, type StoredState } from "./stored-state.js";

/** A failed store write, naming what it wrote; `cause` is the store's error. */
export class StoreWriteError extends Error {
  constructor(
    readonly what: string,
    override readonly cause: unknown,
  ) {
    super(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "StoreWriteError";
  }
}

/** Runs `write`, its failure a StoreWriteError naming `what`. */
export async function storeWrite(what: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    throw new StoreWriteError(what, error);
  }
}

export interface RouteWriteContext {
  readonly writer: ClusterWriter;
  /** A route record was put or deleted. */
  written(op: "put" | "delete"): void;
  /**
   * A route write changed which (service, port) pairs the stored routes reference: these Services, with the
   * ports their records served before, may need their records recomputed.
   */
  touched(services: readonly string[]): void;
}

/**
 * Brings the stored routes to `desired`, one atomic write per route, updating `stored` as each lands.
 * `available-puts` writes only the changed routes whose every backend port is in a stored service record
 * already (nothing a router reads can point at a port not stored yet); `all` writes every changed route, then
 * removes the stored routes no longer desired. Throws StoreWriteError on the first failed write.
 */
export async function writeRoutes(
  desired: ReadonlyMap<string, DesiredRoute>,
  stored: StoredState,
  context: RouteWriteContext,
  mode: "available-puts" | "all",
): Promise<void> {
  for (const [id, { route, raw }] of desired) {
    if (stored.routes.get(id) === raw) continue;
    const refs = refsOf(route);
    if (mode === "available-puts" && !refs.every((ref) => stored.servicePorts(ref.service).has(ref.port))) {
      continue;
    }
    const services = [...stored.routeRefs(id), ...refs].map((ref) => ref.service);
    try {
      await context.writer.putRoute(route);
    } catch (error) {
      throw new StoreWriteError(`write ${id}`, error);
    }
    stored.setRoute(id, raw, route);
    context.written("put");
    context.touched(services);
  }
  if (mode !== "all") return;
  for (const id of [...stored.routes.keys()]) {
    if (desired.has(id)) continue;
    const services = stored.routeRefs(id).map((ref) => ref.service);
    try {
      await context.writer.removeRoute(id);
    } catch (error) {
      throw new StoreWriteError(`remove ${id}`, error);
    }
    stored.deleteRoute(id);
    context.written("delete");
    context.touched(services);
  }
}

import type { Logger } from "../../lib/logger.js";
import type { RouteObjects } from "../translate/route-objects.js";
import { KINDS, type KindSpec, ROUTE_KINDS, ROUTE_OBJECT_LISTS, type RouteKind } from "./kinds.js";
import { ValidatedCache } from "./validated-cache.js";

/**
 * The validated cache of the route-relevant kinds (kinds.ts), one ValidatedCache per kind. Objects keep every
 * field the API server sent but managedFields (the status writer puts them back with their status changed).
 */
export class RouteObjectIndex {
  readonly #caches = Object.fromEntries(
    ROUTE_KINDS.map((kind) => [kind, new ValidatedCache(kind, KINDS[kind].namespaced, KINDS[kind].parse)]),
  ) as Record<RouteKind, ValidatedCache<object>>;
  #snapshot: RouteObjects | undefined;

  /** True when the cache changed. */
  upsert(kind: RouteKind, raw: unknown, logger: Logger): boolean {
    const relevant: ((raw: unknown) => boolean) | undefined = (KINDS[kind] as KindSpec).relevant;
    // An object the kind does not keep is absent: gone from the cache if it was there, else nothing changed.
    if (relevant && !relevant(raw)) return this.delete(kind, raw);
    const change = this.#cache(kind).upsert(raw, logger);
    // Such kinds keep only what the translation reads: an update of the rest (a resourceVersion) is no change.
    const same =
      relevant !== undefined &&
      change?.previous !== undefined &&
      JSON.stringify(change.previous) === JSON.stringify(change.current);
    return this.#changed(
      !same && change !== undefined && (change.current !== undefined || change.previous !== undefined),
    );
  }

  delete(kind: RouteKind, raw: unknown): boolean {
    return this.#changed(this.#cache(kind).delete(raw)?.previous !== undefined);
  }

  /** The object as cached (with its status and resourceVersion), for the status writer. */
  get(kind: RouteKind, namespace: string | undefined, name: string): object | undefined {
    return this.#cache(kind).get({ namespace: namespace ?? "", name });
  }

  objects(): RouteObjects {
    if (!this.#snapshot) {
      const lists: Record<string, object[]> = {};
      for (const kind of ROUTE_KINDS) lists[ROUTE_OBJECT_LISTS[kind]] = this.#cache(kind).values();
      this.#snapshot = lists as unknown as RouteObjects;
    }
    return this.#snapshot;
  }

  #cache(kind: RouteKind): ValidatedCache<object> {
    return this.#caches[kind];
  }

  #changed(changed: boolean): boolean {
    if (changed) this.#snapshot = undefined;
    return changed;
  }
}

import type { Logger } from "../../lib/logger.js";
import type { Result } from "../../lib/result.js";
import { type ObjectRef, refKey, refOf } from "./object-refs.js";

/** What one upsert or delete did to the cache. */
export interface CacheChange<T> {
  readonly ref: ObjectRef;
  /** The object cached before, if any. */
  readonly previous: T | undefined;
  /** The object cached now; undefined after a delete or an object that failed validation. */
  readonly current: T | undefined;
}

/**
 * The validated objects of one kind by namespace and name, as an informer delivers them. An object that fails
 * validation is logged with its name and left out; a cached one that turns invalid leaves the cache, as if
 * deleted, so readers only ever see objects that validated.
 */
export class ValidatedCache<T> {
  readonly #objects = new Map<string, T>();

  constructor(
    private readonly kind: string,
    private readonly namespaced: boolean,
    private readonly parse: (raw: unknown) => Result<T>,
  ) {}

  /** Undefined for an object without a name (logged: nothing can file it). */
  upsert(raw: unknown, logger: Logger): CacheChange<T> | undefined {
    const ref = refOf(raw, this.namespaced);
    if (!ref) {
      logger.warn(`skipping ${this.kind} without metadata.name`, {
        object: JSON.stringify(raw)?.slice(0, 200),
      });
      return undefined;
    }
    const key = refKey(ref);
    const previous = this.#objects.get(key);
    const parsed = this.parse(raw);
    if (!parsed.ok) {
      logger.warn(`skipping invalid ${this.kind}`, {
        namespace: ref.namespace,
        name: ref.name,
        error: parsed.error,
      });
      this.#objects.delete(key);
      return { ref, previous, current: undefined };
    }
    this.#objects.set(key, parsed.value);
    return { ref, previous, current: parsed.value };
  }

  /** Undefined for an object without a name. */
  delete(raw: unknown): CacheChange<T> | undefined {
    const ref = refOf(raw, this.namespaced);
    if (!ref) return undefined;
    const key = refKey(ref);
    const previous = this.#objects.get(key);
    this.#objects.delete(key);
    return { ref, previous, current: undefined };
  }

  get(ref: ObjectRef): T | undefined {
    return this.#objects.get(refKey(ref));
  }

  values(): T[] {
    return [...this.#objects.values()];
  }
}

import type { Logger } from "../../lib/logger.js";
import { metadataOf } from "./object-refs.js";
import type { WatchEventType } from "./watch-stream.js";

/** Where a reflector hands objects: the caller's cache. */
export interface ObjectSink {
  readonly onUpsert: (object: unknown, receivedAt: number) => void;
  readonly onDelete: (object: unknown, receivedAt: number) => void;
}

/**
 * What a reflector has handed to its cache, by `namespace/name` with the resourceVersion it had: a relist
 * delivers only what changed and deletes what vanished, and a kind that stopped being served deletes all.
 */
export class KnownObjects {
  readonly #versions = new Map<string, string>();

  constructor(
    private readonly sink: ObjectSink,
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  get size(): number {
    return this.#versions.size;
  }

  /**
   * Hands one event's object to the cache (a BOOKMARK only moves the resourceVersion); resolves the object's
   * metadata, undefined for an object without any.
   */
  deliver(
    type: WatchEventType | "LISTED",
    object: unknown,
    receivedAt: number,
  ): Record<string, unknown> | undefined {
    const metadata = metadataOf(object);
    if (!metadata || type === "BOOKMARK") return metadata;
    // Written by every field manager, read by nothing here: the largest part of many objects.
    delete metadata.managedFields;
    const key = keyOf(metadata);
    try {
      if (type === "DELETED") {
        this.#versions.delete(key);
        this.sink.onDelete(object, receivedAt);
      } else {
        this.#versions.set(key, String(metadata.resourceVersion ?? ""));
        this.sink.onUpsert(object, receivedAt);
      }
    } catch (error) {
      this.logger.error("the cache threw on a watch event", { informer: this.label, error });
    }
    return metadata;
  }

  /** The key of a listed item when the cache holds it at this resourceVersion already (nothing to deliver). */
  unchanged(item: unknown): { key: string | undefined; same: boolean } {
    const metadata = metadataOf(item);
    if (!metadata) return { key: undefined, same: true };
    const key = keyOf(metadata);
    return { key, same: this.#versions.get(key) === metadata.resourceVersion };
  }

  /** Deletes from the cache everything not in `kept` (everything when undefined). */
  deleteAllBut(kept: ReadonlySet<string> | undefined, receivedAt: number): void {
    for (const key of [...this.#versions.keys()]) {
      if (kept?.has(key)) continue;
      const [namespace = "", name = ""] = key.split("/");
      this.deliver("DELETED", { metadata: { namespace: namespace || undefined, name } }, receivedAt);
    }
  }
}

function keyOf(metadata: Record<string, unknown>): string {
  return `${String(metadata.namespace ?? "")}/${String(metadata.name ?? "")}`;
}

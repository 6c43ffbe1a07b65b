import { randomUUID } from "node:crypto";
import { applyServerDefaults } from "./api-defaults.js";
import { type FakeKind, RESOURCES } from "./resources.js";

/** An object as the fake server keeps it: plain JSON with the metadata the API server owns filled in. */
export interface FakeObject {
  kind: string;
  apiVersion: string;
  metadata: {
    name: string;
    /** Absent for a cluster-scoped kind (Namespace, GatewayClass, IngressClass). */
    namespace?: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  readonly revision: number;
  readonly kind: FakeKind;
  readonly type: WatchEventType;
  readonly object: FakeObject;
  /** The object as it was before this event (undefined for ADDED): what a read at an older revision sees. */
  readonly previous: FakeObject | undefined;
}

export type ApplyInput = {
  kind: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
};

/**
 * Objects plus a bounded event history under one global, monotonically increasing revision, like etcd
 * behind the API server: every write bumps it, and a watch can resume from any revision still in the
 * window. Older revisions are "compacted" and answer 410 Gone.
 */
export class ObjectStore {
  private revision = 0;
  /** Events with a revision <= this are gone: a watch from an older resourceVersion gets 410. */
  private compactedRevision = 0;
  private readonly objects = new Map<string, FakeObject>();
  private readonly history: StoredEvent[] = [];
  private readonly latestByKind = new Map<FakeKind, number>();

  constructor(
    private readonly historyLimit: number,
    private readonly onEvent: (event: StoredEvent) => void,
  ) {}

  get currentRevision(): number {
    return this.revision;
  }

  get oldestResumableRevision(): number {
    return this.compactedRevision;
  }

  /** The revision of the latest event of `kind`, 0 before any. */
  latestRevisionOf(kind: FakeKind): number {
    return this.latestByKind.get(kind) ?? 0;
  }

  get(kind: FakeKind, namespace: string, name: string): FakeObject | undefined {
    const found = this.objects.get(objectKey(kind, namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  list(kind: FakeKind, namespace?: string): FakeObject[] {
    return sortedCopies(this.objects, kind, namespace);
  }

  /**
   * One page of a LIST as it was at `revision` (etcd serves every page of a list at its first page's revision,
   * so a change made between pages shows in none of them): in resourceVersion order, up to `limit` items newer
   * than `after`, and the resourceVersion to continue after when more remain. Callers answer 410 first when
   * `revision` is older than the history kept.
   */
  page(
    kind: FakeKind,
    namespace: string | undefined,
    filter: (object: FakeObject) => boolean,
    limit: number,
    after: number,
    revision = this.revision,
  ): { items: FakeObject[]; next: number | undefined } {
    const all = sortedCopies(this.objectsAt(revision), kind, namespace).filter(
      (object) => Number(object.metadata.resourceVersion) > after && filter(object),
    );
    const items = all.slice(0, limit);
    const last = items.at(-1);
    return {
      items,
      next: all.length > limit && last ? Number(last.metadata.resourceVersion) : undefined,
    };
  }

  /** Every object as it was at `revision`: today's, with each later event undone, newest first. */
  private objectsAt(revision: number): Map<string, FakeObject> {
    if (revision >= this.revision) return this.objects;
    const objects = new Map(this.objects);
    for (const event of [...this.history].reverse()) {
      if (event.revision <= revision) break;
      const { namespace, name } = event.object.metadata;
      const key = objectKey(event.kind, namespaceFor(event.kind, namespace), name);
      if (event.previous) objects.set(key, event.previous);
      else objects.delete(key);
    }
    return objects;
  }

  /**
   * Creates or replaces; returns the stored copy with its new resourceVersion. metadata.generation counts
   * changes of everything but metadata and status, as the API server counts spec changes; the status of a
   * kind with a status subresource is kept when the input carries none (as `kubectl apply` leaves it), and
   * what the API server fills in is filled in (api-defaults.ts).
   */
  apply(input: ApplyInput): FakeObject {
    const kind = asKind(input.kind);
    const resource = RESOURCES[kind];
    const namespace = namespaceFor(kind, input.metadata.namespace);
    const key = objectKey(kind, namespace, input.metadata.name);
    const previous = this.objects.get(key);
    this.revision += 1;
    const object = structuredClone(input) as unknown as FakeObject;
    object.apiVersion = resource.apiVersion;
    if (resource.status && object.status === undefined && previous?.status !== undefined) {
      object.status = structuredClone(previous.status);
    }
    const generation = Number(previous?.metadata.generation ?? 0);
    const { namespace: _given, ...metadata } = object.metadata;
    object.metadata = {
      ...metadata,
      ...(resource.namespaced ? { namespace } : {}),
      resourceVersion: String(this.revision),
      generation: previous && specOf(previous) === specOf(object) ? generation : generation + 1,
      uid: previous?.metadata.uid ?? randomUUID(),
      creationTimestamp:
        previous?.metadata.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    };
    applyServerDefaults(kind, object);
    this.objects.set(key, object);
    this.record({ revision: this.revision, kind, type: previous ? "MODIFIED" : "ADDED", object, previous });
    return structuredClone(object);
  }

  /** The status subresource: replaces the status alone (spec and generation stay), a MODIFIED event. */
  setStatus(kind: FakeKind, namespace: string, name: string, status: unknown): FakeObject | undefined {
    const key = objectKey(kind, namespace, name);
    const previous = this.objects.get(key);
    if (!previous) return undefined;
    this.revision += 1;
    const object = structuredClone(previous);
    object.status = structuredClone(status);
    object.metadata.resourceVersion = String(this.revision);
    applyServerDefaults(kind, object);
    this.objects.set(key, object);
    this.record({ revision: this.revision, kind, type: "MODIFIED", object, previous });
    return structuredClone(object);
  }

  /** Deletes; the DELETED event carries the object at the deletion's revision, as the API server does. */
  remove(kind: FakeKind, namespace: string, name: string): boolean {
    const key = objectKey(kind, namespace, name);
    const previous = this.objects.get(key);
    if (!previous) return false;
    this.objects.delete(key);
    this.revision += 1;
    const object = structuredClone(previous);
    object.metadata.resourceVersion = String(this.revision);
    this.record({ revision: this.revision, kind, type: "DELETED", object, previous });
    return true;
  }

  /** Events after `revision`, or undefined when part of that range was compacted away. */
  eventsAfter(revision: number): StoredEvent[] | undefined {
    if (revision < this.compactedRevision) return undefined;
    return this.history.filter((event) => event.revision > revision);
  }

  /** Compaction: every resourceVersion older than now becomes too old to resume from. */
  expireHistory(): void {
    this.history.length = 0;
    this.compactedRevision = this.revision;
  }

  private record(event: StoredEvent): void {
    this.latestByKind.set(event.kind, event.revision);
    this.history.push(event);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift();
      if (dropped) this.compactedRevision = dropped.revision;
    }
    this.onEvent(event);
  }
}

/** Copies of the objects of `kind` (in `namespace`, or all) in resourceVersion order. */
function sortedCopies(
  objects: ReadonlyMap<string, FakeObject>,
  kind: FakeKind,
  namespace?: string,
): FakeObject[] {
  const prefix = namespace === undefined ? `${kind}/` : `${kind}/${namespace}/`;
  const items: FakeObject[] = [];
  for (const [key, object] of objects) if (key.startsWith(prefix)) items.push(structuredClone(object));
  return items.sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
}

export function objectKey(kind: FakeKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

export function asKind(kind: string): FakeKind {
  if (Object.hasOwn(RESOURCES, kind)) return kind as FakeKind;
  throw new Error(`the fake API server does not serve kind ${kind}`);
}

/** The namespace an object of `kind` is kept under: "" for a cluster-scoped kind, "default" when unset. */
export function namespaceFor(kind: FakeKind, namespace: string | undefined): string {
  return RESOURCES[kind].namespaced ? (namespace ?? "default") : "";
}

function specOf(object: FakeObject): string {
  const { metadata: _metadata, status: _status, resourceVersion: _version, ...rest } = object;
  return JSON.stringify(rest);
}

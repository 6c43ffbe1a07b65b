/**
 * An immutable map of string keys whose versions share what a change did not touch: a hash trie of three
 * levels of 32 slots over small leaf Maps. A version with some keys changed copies the three arrays on each
 * changed key's path and that key's leaf (about size / 32,768 entries), never the whole map, so a store of a
 * million records takes a change at the cost of the change (docs/design.md "Cost per change"). Reads hash the
 * key once (FNV-1a) and index three arrays. Iteration order is the trie's, not insertion order: readers sort
 * what they show.
 */
const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
const DEPTH = 3;

type Leaf<V> = Map<string, V>;
type Slot<V> = Branch<V> | Leaf<V> | undefined;
type Branch<V> = Slot<V>[];

function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function slotOf(hash: number, level: number): number {
  return (hash >>> (level * BITS)) & MASK;
}

export class PersistentMap<V> implements ReadonlyMap<string, V> {
  readonly #root: Branch<V>;
  readonly size: number;

  private constructor(root: Branch<V>, size: number) {
    this.#root = root;
    this.size = size;
  }

  static empty<V>(): PersistentMap<V> {
    return new PersistentMap<V>(new Array<Slot<V>>(WIDTH), 0);
  }

  static from<V>(entries: Iterable<readonly [string, V]>): PersistentMap<V> {
    return PersistentMap.empty<V>().withChanges(entries);
  }

  get(key: string): V | undefined {
    return this.#leaf(key)?.get(key);
  }

  has(key: string): boolean {
    return this.#leaf(key)?.has(key) === true;
  }

  /** This map with `value` under `key`. */
  with(key: string, value: V): PersistentMap<V> {
    return this.withChanges([[key, value]]);
  }

  /** This map without `key`. */
  without(key: string): PersistentMap<V> {
    return this.withChanges([[key, undefined]]);
  }

  /**
   * This map with each change applied in order: a value replaces, undefined removes. Only the paths of the keys
   * changed are copied, each once per call; this map is left as it was.
   */
  withChanges(changes: Iterable<readonly [string, V | undefined]>): PersistentMap<V> {
    const owned = new Set<object>();
    const root = this.#root.slice();
    owned.add(root);
    let size = this.size;
    for (const [key, value] of changes) {
      const hash = hashOf(key);
      let branch = root;
      for (let level = 0; level < DEPTH - 1; level++) {
        const index = slotOf(hash, level);
        const child = branch[index] as Branch<V> | undefined;
        let next: Branch<V>;
        if (child === undefined) next = new Array<Slot<V>>(WIDTH);
        else if (owned.has(child)) next = child;
        else next = child.slice();
        owned.add(next);
        branch[index] = next;
        branch = next;
      }
      const index = slotOf(hash, DEPTH - 1);
      const leaf = branch[index] as Leaf<V> | undefined;
      if (value === undefined && !leaf?.has(key)) continue;
      let next: Leaf<V>;
      if (leaf === undefined) next = new Map();
      else if (owned.has(leaf)) next = leaf;
      else next = new Map(leaf);
      owned.add(next);
      const had = next.has(key);
      if (value === undefined) {
        next.delete(key);
        size--;
      } else {
        next.set(key, value);
        if (!had) size++;
      }
      branch[index] = next.size > 0 ? next : undefined;
    }
    return new PersistentMap(root, size);
  }

  /**
   * The keys whose values differ between two versions (by identity), found by walking only the parts of the
   * tries the versions do not share: a few array compares per change between them, whatever their size.
   */
  static changedKeys<V>(before: PersistentMap<V>, after: PersistentMap<V>): Set<string> {
    const changed = new Set<string>();
    diffSlots(before.#root, after.#root, 0, changed);
    return changed;
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }

  *entries(): MapIterator<[string, V]> {
    yield* walk(this.#root, 0);
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  #leaf(key: string): Leaf<V> | undefined {
    const hash = hashOf(key);
    let slot: Slot<V> = this.#root;
    for (let level = 0; level < DEPTH - 1 && slot !== undefined; level++) {
      slot = (slot as Branch<V>)[slotOf(hash, level)];
    }
    return slot === undefined
      ? undefined
      : ((slot as Branch<V>)[slotOf(hash, DEPTH - 1)] as Leaf<V> | undefined);
  }
}

function* walk<V>(branch: Branch<V>, level: number): Generator<[string, V], undefined, unknown> {
  for (const slot of branch) {
    if (slot === undefined) continue;
    if (level === DEPTH - 1) yield* (slot as Leaf<V>).entries();
    else yield* walk(slot as Branch<V>, level + 1);
  }
}

function diffSlots<V>(before: Slot<V>, after: Slot<V>, level: number, changed: Set<string>): void {
  if (before === after) return;
  if (level === DEPTH) {
    const a = before as Leaf<V> | undefined;
    const b = after as Leaf<V> | undefined;
    for (const [key, value] of a ?? []) if (b?.get(key) !== value || !b.has(key)) changed.add(key);
    for (const [key, value] of b ?? []) if (a?.get(key) !== value || !a.has(key)) changed.add(key);
    return;
  }
  for (let index = 0; index < WIDTH; index++) {
    diffSlots(
      (before as Branch<V> | undefined)?.[index],
      (after as Branch<V> | undefined)?.[index],
      level + 1,
      changed,
    );
  }
}

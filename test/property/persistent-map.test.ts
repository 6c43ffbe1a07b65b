import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PersistentMap } from "../../lib/persistent-map.js";

/** lib/persistent-map.ts against a plain Map: the same contents after any changes, and versions kept apart. */
const keyArb = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: 0, max: 3000 }).map(String));
const batchArb = fc.array(fc.tuple(keyArb, fc.option(fc.integer(), { nil: undefined, freq: 3 })), {
  maxLength: 40,
});

const sorted = (map: ReadonlyMap<string, number>) =>
  [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

describe("a persistent map", () => {
  it("holds what a Map given the same changes holds, and each earlier version what it held", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { maxLength: 6 }), (batches) => {
        let map = PersistentMap.empty<number>();
        const model = new Map<string, number>();
        const versions: [PersistentMap<number>, [string, number][]][] = [];
        for (const batch of batches) {
          versions.push([map, sorted(model)]);
          map = map.withChanges(batch);
          for (const [key, value] of batch) {
            if (value === undefined) model.delete(key);
            else model.set(key, value);
          }
          expect(map.size).toBe(model.size);
          expect(sorted(map)).toEqual(sorted(model));
          for (const [key] of batch) {
            expect(map.get(key)).toBe(model.get(key));
            expect(map.has(key)).toBe(model.has(key));
          }
        }
        for (const [version, held] of versions) expect(sorted(version)).toEqual(held);
      }),
      { numRuns: 300 },
    );
  });

  it("names exactly the keys whose values differ between two versions", () => {
    fc.assert(
      fc.property(batchArb, batchArb, batchArb, (start, left, right) => {
        const base = PersistentMap.from(
          start.flatMap(([key, value]) => (value === undefined ? [] : [[key, value] as const])),
        );
        const a = base.withChanges(left);
        const b = base.withChanges(right);
        const expected = new Set<string>();
        for (const key of new Set([...a.keys(), ...b.keys()])) {
          if (a.has(key) !== b.has(key) || a.get(key) !== b.get(key)) expected.add(key);
        }
        expect([...PersistentMap.changedKeys(a, b)].sort()).toEqual([...expected].sort());
      }),
      { numRuns: 300 },
    );
  });
});

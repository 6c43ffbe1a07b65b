/** Shapes of ioredis replies, checked rather than cast: a reply that is not what we asked for reads as empty. */

/** A flat reply `[name, value, name, value, ...]` (HGETALL as an array, XINFO, stream entry fields) as pairs. */
export function flatPairs<T>(flat: readonly T[]): [T, T][] {
  const pairs: [T, T][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i];
    const value = flat[i + 1];
    if (name !== undefined && value !== undefined) pairs.push([name, value]);
  }
  return pairs;
}

/** A hash reply: HGETALL gives an object (ioredis), tolerate a flat array too; non-string values are dropped. */
export function hashEntries(reply: unknown): [string, string][] {
  const entries: [unknown, unknown][] = Array.isArray(reply)
    ? flatPairs<unknown>(reply)
    : reply && typeof reply === "object"
      ? Object.entries(reply)
      : [];
  return entries.filter(
    (entry): entry is [string, string] => typeof entry[0] === "string" && typeof entry[1] === "string",
  );
}

/** Results of `pipeline().exec()`, throwing the first command error. */
export function pipelineValues(results: [Error | null, unknown][] | null, expected: number): unknown[] {
  if (!results || results.length !== expected) throw new Error("redis pipeline returned no results");
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

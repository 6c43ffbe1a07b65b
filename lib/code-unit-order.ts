/**
 * Strings in plain UTF-16 code-unit order, the order of `<` on strings: the same on every runtime and locale,
 * unlike `localeCompare`. Records, keys and listings sorted by it come out byte for byte the same wherever they
 * are built, so a sync and a router (Node or Workers) agree on them.
 *
 * @example
 * ["b", "B", "a"].sort(byCodeUnits); // ["B", "a", "b"]
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

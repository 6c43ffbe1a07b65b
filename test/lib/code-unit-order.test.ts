import { describe, expect, it } from "vitest";
import { byCodeUnits } from "../../lib/code-unit-order.js";

describe("byCodeUnits", () => {
  it.each([
    ["a", "b", -1],
    ["b", "a", 1],
    ["a", "a", 0],
    ["", "a", -1],
    ["Z", "a", -1],
    ["a", "ab", -1],
    ["é", "z", 1],
    ["\u{1F600}", "\uFFFF", -1],
  ] as const)("orders %j against %j as %d, by UTF-16 code units", (a, b, expected) => {
    expect(byCodeUnits(a, b)).toBe(expected);
  });

  it("sorts upper case before lower case and ignores the locale", () => {
    expect(["b", "B", "a", "A", "ä"].sort(byCodeUnits)).toEqual(["A", "B", "a", "b", "ä"]);
  });
});

import { describe, expect, it } from "vitest";
import { queryParamsMatch } from "../../../functions/core/routes/request-match.js";

describe("query parameter matches", () => {
  const animal = [{ name: "animal", value: "whale" }];
  it.each([
    ["the value given", "/?animal=whale", animal, true],
    ["among other parameters", "/a?x=1&animal=whale&y", animal, true],
    ["percent-encoded", "/?anim%61l=wh%61le", animal, true],
    ["the first of a repeated parameter", "/?animal=whale&animal=shark", animal, true],
    ["another value", "/?animal=whaledolphin", animal, false],
    ["a name in another case", "/?ANIMAL=whale", animal, false],
    ["no query", "/animal=whale", animal, false],
    ["a broken percent-encoding", "/?animal=wh%zzale", animal, false],
    ["every one of two", "/?color=blue&animal=whale", [...animal, { name: "color", value: "blue" }], true],
    ["one of two", "/?animal=whale", [...animal, { name: "color", value: "blue" }], false],
  ])("matches %s: %s", (_case, target, wanted, expected) => {
    expect(queryParamsMatch(wanted, target)).toBe(expected);
  });
});

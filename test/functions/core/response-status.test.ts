import { describe, expect, it } from "vitest";
import { forbidsContentLength, isFinalStatus } from "../../../functions/core/http/response-status.js";

describe("isFinalStatus", () => {
  it.each<[number, boolean, boolean]>([
    [200, false, true],
    [599, false, true],
    [304, false, true],
    [600, false, false],
    [999, false, false],
    [199, false, false],
    [100, false, false],
    [0, false, false],
    [101, false, false],
    [101, true, true],
    [200, true, true],
  ])("status %i (upgrade requested: %s) is a final answer: %s", (status, upgrade, final) => {
    expect(isFinalStatus(status, upgrade)).toBe(final);
  });
});

describe("forbidsContentLength", () => {
  it.each<[number, boolean]>([
    [204, true],
    [101, true],
    [103, true],
    [200, false],
    [304, false],
    [205, false],
  ])("status %i forbids Content-Length: %s", (status, forbidden) => {
    expect(forbidsContentLength(status)).toBe(forbidden);
  });
});

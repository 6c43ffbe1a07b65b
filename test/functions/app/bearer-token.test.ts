import { describe, expect, it } from "vitest";
import { bearerToken } from "../../../functions/app/bearer-token.js";

describe("bearerToken", () => {
  it.each<[string, string | undefined, string | undefined]>([
    ["the scheme as RFC 6750 spells it", "Bearer abc", "abc"],
    ["the scheme in lower case (RFC 9110 §11.1: case-insensitive)", "bearer abc", "abc"],
    ["the scheme in capitals", "BEARER abc", "abc"],
    ["more than one space before the token (1*SP)", "Bearer   abc", "abc"],
    ["no field", undefined, undefined],
    ["another scheme", "Basic abc", undefined],
    ["a scheme that only starts like Bearer", "Bearerx abc", undefined],
    ["the scheme without a space", "Bearerabc", undefined],
    ["the scheme without a token", "Bearer ", undefined],
    ["the scheme alone", "Bearer", undefined],
  ])("reads %s", (_case, field, token) => {
    expect(bearerToken(field)).toBe(token);
  });
});

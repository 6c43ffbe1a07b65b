import { describe, expect, it } from "vitest";
import { lowerCaseFieldName } from "../../../functions/node/header-names.js";

describe("a backend's response field name", () => {
  it.each([
    ["content-type", "content-type"],
    ["Content-Type", "content-type"],
    ["CONTENT-LENGTH", "content-length"],
    ["Date", "date"],
    ["Keep-Alive", "keep-alive"],
    ["X-Request-Id", "x-request-id"],
    ["X-Custom-Field", "x-custom-field"],
    ["content-typf", "content-typf"],
    ["Content_Type", "content_type"],
    ["dat\u00c9", "dat\u00e9"],
  ])("%j reads as %j, as decoding it as Latin-1 and lower-casing it would", (raw, expected) => {
    const bytes = Buffer.from(raw, "latin1");
    expect(lowerCaseFieldName(bytes)).toBe(expected);
    expect(lowerCaseFieldName(bytes)).toBe(bytes.toString("latin1").toLowerCase());
  });

  it("reads a name that shares its buffer with other bytes (undici's raw headers are views)", () => {
    const head = Buffer.from("xxServerxx", "latin1");
    expect(lowerCaseFieldName(head.subarray(2, 8))).toBe("server");
    expect(lowerCaseFieldName(head.subarray(1, 9))).toBe("xserverx");
  });
});

import { describe, expect, it } from "vitest";
import { subjectAltNameEntries } from "../../../functions/node/tls/backend-identity.js";

/** Node's `subjectaltname` string read back entry by entry, for a policy's URI subjectAltNames. */
describe("subjectAltNameEntries", () => {
  it("splits Node's comma-separated list into TYPE:value entries", () => {
    expect(subjectAltNameEntries("DNS:abc.example.com, URI:spiffe://abc.example.com/test-identity")).toEqual([
      "DNS:abc.example.com",
      "URI:spiffe://abc.example.com/test-identity",
    ]);
  });

  it("reads a value Node quoted (it holds a comma) as one entry, unquoted", () => {
    expect(subjectAltNameEntries('URI:"spiffe://a.test/x, y", DNS:b.test')).toEqual([
      "URI:spiffe://a.test/x, y",
      "DNS:b.test",
    ]);
  });

  it("has no entries for a certificate without subjectAltName", () => {
    expect(subjectAltNameEntries(undefined)).toEqual([]);
    expect(subjectAltNameEntries("")).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { mayClaim, parseHostClaims } from "../../../sync/translate/host-claims.js";

function claims(text: string) {
  const parsed = parseHostClaims(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

describe("HOST_CLAIMS parsing", () => {
  it.each([
    ["unset means no restriction", undefined],
    ["blank means no restriction", "  "],
  ])("%s", (_, text) => {
    expect(parseHostClaims(text)).toEqual({ ok: true, value: undefined });
  });

  it("reads namespace=pattern,... entries separated by semicolons, lower-cased, repeats merged", () => {
    const parsed = claims("payments=Pay.test, *.pay.test ; shop=shop.test;payments=pay.test;;");
    expect(Object.fromEntries(parsed?.byNamespace ?? [])).toEqual({
      payments: ["pay.test", "*.pay.test"],
      shop: ["shop.test"],
    });
  });

  it.each([
    ["an entry without =", "payments", "is not namespace=pattern"],
    ["a namespace that is not a DNS label", "Pay_ments=pay.test", "is not a namespace name"],
    ["a pattern with a path", "payments=pay.test/x", "is not a host name"],
    ["a wildcard in the middle", "payments=pay.*.test", "is not a host name"],
    ["a bare *. with no name", "payments=*.", "is not a host name"],
  ])("refuses %s with a message naming it", (_, text, message) => {
    const parsed = parseHostClaims(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(message);
  });
});

describe("who may claim a host", () => {
  const rules = claims("payments=pay.test,*.pay.test;shop=shop.test;platform=*;*=*.shared.test");
  it.each([
    // [namespace, host, allowed]
    ["payments", "pay.test", true],
    ["payments", "api.pay.test", true],
    ["payments", "a.b.pay.test", true],
    ["payments", "*.pay.test", true],
    ["payments", "*.eu.pay.test", true],
    ["payments", "xpay.test", false],
    ["aaa", "pay.test", false],
    ["aaa", "api.pay.test", false],
    ["shop", "shop.test", true],
    ["shop", "www.shop.test", false],
    ["shop", undefined, false],
    ["platform", "anything.example", true],
    ["platform", undefined, true],
    ["aaa", "team.shared.test", true],
    ["aaa", "shared.test", false],
  ] as const)("%s claiming %s: %s", (namespace, host, allowed) => {
    expect(mayClaim(rules, namespace, host)).toBe(allowed);
  });

  it("lets anyone claim anything when HOST_CLAIMS is unset", () => {
    expect(mayClaim(undefined, "aaa", "pay.test")).toBe(true);
    expect(mayClaim(undefined, "aaa", undefined)).toBe(true);
  });
});

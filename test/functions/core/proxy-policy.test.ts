import { describe, expect, it } from "vitest";
import { failureError, isIdempotent, mayRetry } from "../../../functions/core/forwarding/proxy-policy.js";

describe("mayRetry", () => {
  it.each([
    ["connect", false, true, true],
    ["connect", true, true, true],
    ["connect", false, false, false],
    ["transport", true, true, true],
    ["transport", false, true, false],
    ["timeout", true, true, true],
    ["timeout", false, true, false],
    ["timeout", true, false, false],
    ["client", true, true, false],
  ] as const)(
    "after a %s failure (idempotent %s, body resendable %s) retries: %s",
    (kind, idempotent, canResend, expected) => {
      expect(mayRetry(kind, idempotent, canResend)).toBe(expected);
    },
  );
});

describe("failureError", () => {
  it.each([
    ["timeout", "upstream_timeout"],
    ["connect", "bad_gateway"],
    ["transport", "bad_gateway"],
    ["client", "client_closed"],
  ] as const)("answers a last %s failure with %s", (kind, expected) => {
    expect(failureError(kind)).toBe(expected);
  });

  it("answers a client that stalled sending its body with request_timeout (408), not a gateway error", () => {
    expect(failureError("client", true)).toBe("request_timeout");
  });
});

describe("isIdempotent (RFC 9110 §9.2.2)", () => {
  it.each([
    ["GET", true],
    ["HEAD", true],
    ["PUT", true],
    ["DELETE", true],
    ["OPTIONS", true],
    ["TRACE", true],
    ["POST", false],
    ["PATCH", false],
  ])("%s is idempotent: %s", (method, expected) => {
    expect(isIdempotent(method)).toBe(expected);
  });
});

import { describe, expect, it } from "vitest";
import { isConnectFailure, upstreamError } from "../../../functions/transports/connect-errors.js";
import { UpstreamConnectError, type UpstreamRequest } from "../../../functions/transports/upstream.js";

/** One failure classification for every transport (connect-errors.ts). */
describe("isConnectFailure", () => {
  it.each([
    ["ECONNREFUSED", true],
    ["EHOSTUNREACH", true],
    ["UND_ERR_CONNECT_TIMEOUT", true],
    ["ECONNRESET", false],
    ["UND_ERR_SOCKET", false],
  ])("a fetch failure caused by %s is a connect failure: %s", (code, expected) => {
    const cause = Object.assign(new Error(code), { code });
    expect(isConnectFailure(new TypeError("fetch failed", { cause }))).toBe(expected);
  });
});

function systemError(code: string, syscall?: string): Error {
  return Object.assign(new Error(`${syscall ?? "socket"} ${code}`), { code, syscall });
}

describe("connect-phase classification", () => {
  it.each([
    ["a refused connect", systemError("ECONNREFUSED", "connect"), true],
    ["a connect that timed out in the kernel", systemError("ETIMEDOUT", "connect"), true],
    ["an unreachable host", systemError("EHOSTUNREACH", "connect"), true],
    ["undici's connect timeout", systemError("UND_ERR_CONNECT_TIMEOUT"), true],
    [
      "a connect error wrapped as a cause",
      new Error("wrapped", { cause: systemError("ENETUNREACH", "connect") }),
      true,
    ],
    ["a reset while reading the response", systemError("ECONNRESET", "read"), false],
    ["a timeout on an established socket", systemError("ETIMEDOUT", "read"), false],
    ["the socket closing after the request was sent", systemError("UND_ERR_SOCKET"), false],
    ["something that is not an error", "ECONNREFUSED", false],
    ["an UpstreamConnectError a transport raised", new UpstreamConnectError({ ip: "::1", port: 9 }), true],
  ])("classifies %s as connect-phase or not", (_label, error, expected) => {
    expect(isConnectFailure(error)).toBe(expected);
  });
});

describe("upstreamError", () => {
  const request = (signal: AbortSignal): UpstreamRequest => ({
    target: { ip: "127.0.0.1", port: 9 },
    method: "GET",
    path: "/",
    headers: new Headers(),
    body: null,
    signal,
  });

  it("wraps a connect failure as UpstreamConnectError, keeping the original as its cause", () => {
    const refused = systemError("ECONNREFUSED", "connect");
    const error = upstreamError(refused, request(new AbortController().signal));
    expect(error).toBeInstanceOf(UpstreamConnectError);
    expect([(error as Error).message, (error as Error).cause]).toEqual([
      "cannot connect to 127.0.0.1:9",
      refused,
    ]);
  });

  it.each([
    ["a failure after the request was sent", systemError("ECONNRESET", "read"), false],
    ["a connect failure once the router aborted the attempt", systemError("ECONNREFUSED", "connect"), true],
  ])("passes %s through as is", (_what, failure, aborted) => {
    const controller = new AbortController();
    if (aborted) controller.abort();
    expect(upstreamError(failure, request(controller.signal))).toBe(failure);
  });
});

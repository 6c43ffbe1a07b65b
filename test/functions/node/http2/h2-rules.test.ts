import { describe, expect, it } from "vitest";
import { authorityProblem } from "../../../../functions/node/http2-front/authority.js";
import { HTTP2_PREFACE, prefaceVerdict } from "../../../../functions/node/http2-front/cleartext-split.js";
import { FrameBudget } from "../../../../lib/http2/frame-budget.js";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("prefaceVerdict", () => {
  it.each([
    ["the whole preface", HTTP2_PREFACE, "http2"],
    ["the preface and a SETTINGS frame after it", Buffer.concat([HTTP2_PREFACE, Buffer.alloc(9)]), "http2"],
    ["its first byte only", bytes("P"), "undecided"],
    ["all but its last byte", HTTP2_PREFACE.subarray(0, 23), "undecided"],
    ["nothing yet", Buffer.alloc(0), "undecided"],
    ["an HTTP/1.1 GET", bytes("GET / HTTP/1.1\r\n"), "http1"],
    ["a POST (same first letter as PRI)", bytes("POST / HTTP/1.1\r\n"), "http1"],
    ["an HTTP/1.1 request with the PRI method", bytes("PRI / HTTP/1.1\r\n"), "http1"],
    [
      "a preface that differs in its last byte",
      Buffer.concat([HTTP2_PREFACE.subarray(0, 23), bytes("x")]),
      "http1",
    ],
    ["a TLS ClientHello on the cleartext port", Buffer.from([0x16, 0x03, 0x01]), "http1"],
  ])("%s: %s", (_name, input, verdict) => {
    expect(prefaceVerdict(input)).toBe(verdict);
  });
});

describe("authorityProblem (RFC 9113 §8.3.1)", () => {
  it.each([
    ["an :authority alone", "app.example", undefined, undefined],
    ["a Host alone (no :authority)", undefined, "app.example", undefined],
    ["a Host equal to :authority", "app.example:8080", "app.example:8080", undefined],
    ["a Host equal but for case", "App.Example", "app.example", undefined],
    ["a Host naming another site", "app.example", "admin.example", "bad_request"],
    ["a Host with another port", "app.example", "app.example:81", "bad_request"],
    ["userinfo in :authority", "user@app.example", undefined, "bad_request"],
  ])("%s", (_name, authority, host, problem) => {
    expect(authorityProblem(authority, host)).toBe(problem);
  });
});

describe("FrameBudget", () => {
  it.each([
    ["within the budget in one window", [0, 1, 2], [true, true, true]],
    ["one over the budget in one window", [0, 1, 2, 3], [true, true, true, false]],
    ["a new window starts the count again", [0, 1, 2, 1_000, 1_001], [true, true, true, true, true]],
    ["the window's last instant still counts in it", [0, 1, 2, 999], [true, true, true, false]],
  ])("%s", (_name, times, allowed) => {
    const budget = new FrameBudget(3, 1_000);
    expect(times.map((at) => budget.spend(at))).toEqual(allowed);
  });
});

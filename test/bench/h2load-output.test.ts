import { describe, expect, it } from "vitest";
import { durationMs, parseH2loadOutput } from "../../bench/h2/h2load.js";

/** h2load 1.52's summary (Debian bookworm's nghttp2-client), as the h2 bench reads it. */
const SUMMARY = `Stopped all clients for thread #0

finished in 1.00s, 7560.00 req/s, 228.99KB/s
requests: 7560 total, 7568 started, 7560 done, 7550 succeeded, 10 failed, 0 errored, 0 timeout
status codes: 7540 2xx, 1 3xx, 4 4xx, 5 5xx
traffic: 228.99KB (234488) total, 14.86KB (15212) headers (space savings 95.32%), 14.77KB (15120) data
                     min         max         mean         sd        +/- sd
time for request:      120us     46.39ms      1.05ms      3.27ms    95.93%
time for connect:      199us       300us       249us        70us   100.00%
`;

describe("parseH2loadOutput", () => {
  it("reads rps, succeeded and failed requests, non-2xx answers and the mean time per request", () => {
    expect(parseH2loadOutput(SUMMARY)).toEqual({
      rps: 7560,
      succeeded: 7550,
      failed: 10,
      non2xx: 10,
      meanMs: 1.05,
    });
  });

  it("throws when h2load printed no summary (it failed to connect, say)", () => {
    expect(() => parseH2loadOutput("client could not connect to host\nabort\n")).toThrow(/no summary/);
  });
});

describe("durationMs", () => {
  it.each([
    ["120us", 0.12],
    ["1.05ms", 1.05],
    ["1.5s", 1500],
    ["soon", Number.NaN],
  ])("%s is %s ms", (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });
});

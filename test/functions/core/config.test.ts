import { describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/config.js";

describe("parseRouterConfig: the access log", () => {
  it("is off, sampling everything once on, by default", () => {
    expect(parseRouterConfig({}).accessLog).toEqual({ enabled: false, sample: 1 });
  });

  it.each([
    [{ ACCESS_LOG: "true" }, { enabled: true, sample: 1 }],
    [
      { ACCESS_LOG: "1", ACCESS_LOG_SAMPLE: "0.1" },
      { enabled: true, sample: 0.1 },
    ],
    [
      { ACCESS_LOG: "on", ACCESS_LOG_SAMPLE: "0" },
      { enabled: true, sample: 0 },
    ],
    [
      { ACCESS_LOG: "", ACCESS_LOG_SAMPLE: "" },
      { enabled: false, sample: 1 },
    ],
    [
      { ACCESS_LOG: "false", ACCESS_LOG_SAMPLE: "0.5" },
      { enabled: false, sample: 0.5 },
    ],
  ])("reads %j as %j", (env, expected) => {
    expect(parseRouterConfig(env).accessLog).toEqual(expected);
  });

  it.each([
    [{ ACCESS_LOG: "maybe" }, /ACCESS_LOG: must be true or false/],
    [{ ACCESS_LOG_SAMPLE: "1.5" }, /ACCESS_LOG_SAMPLE/],
    [{ ACCESS_LOG_SAMPLE: "-0.1" }, /ACCESS_LOG_SAMPLE/],
    [{ ACCESS_LOG_SAMPLE: "half" }, /ACCESS_LOG_SAMPLE/],
  ])("refuses %j", (env, message) => {
    expect(() => parseRouterConfig(env)).toThrow(message);
  });

  it("names every bad variable in one error", () => {
    expect(() => parseRouterConfig({ ACCESS_LOG: "x", ACCESS_LOG_SAMPLE: "2" })).toThrow(
      /ACCESS_LOG: .*; ACCESS_LOG_SAMPLE: /,
    );
  });
});

import { describe, expect, it } from "vitest";
import { upstreamRequestHeaderList, upstreamRequestHeaders } from "../../../functions/core/http/headers.js";
import {
  formatTraceparent,
  hexOf,
  isValidTraceparent,
  isValidTracestate,
  parseTraceparent,
  TraceIds,
} from "../../../functions/core/http/trace-context.js";
import { propagationOnly } from "../../../functions/core/observability/tracing.js";
import { info } from "./header-fixtures.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const VALID = `00-${TRACE}-${PARENT}-01`;

describe("parseTraceparent (W3C Trace Context §3.2)", () => {
  it.each([
    ["version 00", VALID, { traceId: TRACE, parentId: PARENT, flags: 1 }],
    ["unsampled", `00-${TRACE}-${PARENT}-00`, { traceId: TRACE, parentId: PARENT, flags: 0 }],
    [
      "a later version, longer",
      `cc-${TRACE}-${PARENT}-09-what-the-future-says`,
      { traceId: TRACE, parentId: PARENT, flags: 9 },
    ],
    [
      "a later version, exactly as long",
      `01-${TRACE}-${PARENT}-01`,
      { traceId: TRACE, parentId: PARENT, flags: 1 },
    ],
  ])("reads %s", (_what, value, expected) => {
    expect(parseTraceparent(value)).toEqual(expected);
  });

  it.each([
    ["version ff", `ff-${TRACE}-${PARENT}-01`],
    ["version 00 with more after it", `${VALID}-extra`],
    ["a later version with no dash after the flags", `01-${TRACE}-${PARENT}-01x`],
    ["upper-case hex", `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${PARENT}-01`],
    ["an all-zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["a short trace id", `00-${TRACE.slice(1)}-${PARENT}-01`],
    ["flags that are no hex", `00-${TRACE}-${PARENT}-0g`],
    ["two fields joined", `${VALID}, ${VALID}`],
    ["nothing", ""],
  ])("refuses %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe("isValidTracestate (§3.3)", () => {
  it.each([
    ["one member", "congo=t61rcWkgMzE", true],
    ["members with spaces and an empty one", "rojo=00f067aa0ba902b7 , ,congo=t61rcWkgMzE", true],
    ["a tenant key", "fw529a3039@dt=ZGVmYXVsdA", true],
    ["a key twice", "a=1,a=2", false],
    ["an upper-case key", "Congo=1", false],
    ["a value with a comma-free equals sign", "a=b=c", false],
    ["33 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), false],
    ["over 512 characters", `a=${"x".repeat(520)}`, false],
  ])("%s: %s", (_what, value, valid) => {
    expect(isValidTracestate(value)).toBe(valid);
  });
});

describe("TraceIds", () => {
  it("draws ids from its pool, refilling it when spent, and never an all-zero one", () => {
    let fills = 0;
    const ids = new TraceIds((bytes) => {
      fills++;
      // The first draw starts all zero: the ids must skip it.
      const pool = Uint8Array.from({ length: bytes }, (_, i) =>
        fills === 1 && i < 24 ? 0 : (i * 7 + fills) & 0xff,
      );
      return hexOf(pool);
    });
    const parsed = parseTraceparent(ids.newTraceparent());
    expect(parsed?.flags).toBe(1);
    expect(parsed?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(parsed?.traceId).not.toBe("0".repeat(32));
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) seen.add(ids.traceId());
    expect(fills).toBeGreaterThan(1);
    expect(seen.size).toBeGreaterThan(1);
  });

  it("agrees with parseTraceparent on what is valid (isValidTraceparent)", () => {
    for (const value of [
      VALID,
      `00-${TRACE}-${PARENT}-00`,
      `00-${"0".repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `cc-${TRACE}-${PARENT}-09-x`,
      "00-nope",
    ])
      expect(isValidTraceparent(value), value).toBe(parseTraceparent(value) !== undefined);
  });

  it("formats version 00", () => {
    expect(formatTraceparent(TRACE, PARENT, false)).toBe(`00-${TRACE}-${PARENT}-00`);
  });
});

/** What a backend gets: the client's context continued, or a new trace. */
describe("traceparent and tracestate on the way upstream", () => {
  const NEW = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
  const off = { ...info, trace: { newTraceparent: () => NEW } };
  const OWN = `00-${TRACE}-${"c".repeat(16)}-01`;
  const traced = { ...info, trace: { traceparent: OWN, newTraceparent: () => NEW } };

  it.each([
    [
      "a valid context passes unchanged",
      off,
      [
        ["traceparent", VALID],
        ["tracestate", "congo=t61"],
      ],
      [VALID, "congo=t61"],
    ],
    ["no context starts a new trace", off, [["accept", "*/*"]], [NEW, null]],
    [
      "an invalid traceparent starts a new trace, its tracestate dropped",
      off,
      [
        ["traceparent", "00-nope"],
        ["tracestate", "congo=t61"],
      ],
      [NEW, null],
    ],
    [
      "two traceparent fields are invalid (§3.2)",
      off,
      [
        ["traceparent", VALID],
        ["traceparent", VALID],
      ],
      [NEW, null],
    ],
    [
      "an invalid tracestate is dropped, the traceparent kept",
      off,
      [
        ["traceparent", VALID],
        ["tracestate", "Bad=1"],
      ],
      [VALID, null],
    ],
    [
      "tracing on: the router's span is the parent, the client's tracestate kept",
      traced,
      [
        ["traceparent", VALID],
        ["tracestate", "congo=t61"],
      ],
      [OWN, "congo=t61"],
    ],
    ["tracing on without a client context: the router's span", traced, [], [OWN, null]],
  ] as const)("%s", (_what, forwarding, sent, [traceparent, tracestate]) => {
    const raw = sent.flat();
    const list = upstreamRequestHeaderList(raw, forwarding);
    const values = (name: string) => list.filter((_, i) => i % 2 === 1 && list[i - 1] === name);
    expect(values("traceparent")).toEqual([traceparent]);
    expect(values("tracestate")).toEqual(tracestate === null ? [] : [tracestate]);
    const web = upstreamRequestHeaders(
      new Headers(sent.map(([n, v]) => [n, v] as [string, string])),
      forwarding,
    );
    expect([web.get("traceparent"), web.get("tracestate")]).toEqual([traceparent, tracestate]);
  });

  it("leaves both fields as they came when no trace is asked for (a caller not yet wired)", () => {
    const list = upstreamRequestHeaderList(["traceparent", "00-nope"], info);
    expect(list).toContain("00-nope");
  });

  it("costs one shared start per request while tracing is off", () => {
    const tracing = propagationOnly(new TraceIds((bytes) => "1".repeat(bytes * 2)));
    expect(tracing.enabled).toBe(false);
    const request = {
      method: "GET",
      host: "h",
      path: "/",
      scheme: "http" as const,
      protocol: "1.1",
      client: undefined,
    };
    expect(tracing.start(request, () => null)).toBe(tracing.untraced);
    expect(parseTraceparent(tracing.untraced.fields.newTraceparent())?.flags).toBe(1);
  });
});

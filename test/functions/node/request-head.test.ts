import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute } from "../../../functions/core/routes/route-table.js";
import { MAX_REQUEST_HEADERS, RequestHead } from "../../../functions/node/request-head.js";
import { exact, request, route, rule } from "../core/route-match-fixtures.js";

/** A rawHeaders list that counts how many of its items were read. */
function counted(raw: string[]): { raw: string[]; reads(): number } {
  let reads = 0;
  const proxy = new Proxy(raw, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { raw: proxy, reads: () => reads };
}

const manyFields = (count: number, name = (i: number) => `X-Field-${i}`) =>
  Array.from({ length: count }, (_, i) => [name(i), `${i}`]).flat();

describe("RequestHead", () => {
  it.each<[string, string[], Partial<RequestHead>]>([
    [
      "reads the Host whatever its case",
      ["HOST", "a.test", "accept", "*/*"],
      { host: "a.test", problem: undefined },
    ],
    ["has no host when the Host is empty", ["host", ""], { host: undefined, problem: undefined }],
    ["has no host without a Host", ["accept", "*/*"], { host: undefined }],
    [
      "refuses a second Host",
      ["host", "a.test", "Host", "b.test"],
      { host: "a.test", problem: "bad_request" },
    ],
    ["finds the request id whatever its case", ["Host", "a", "X-Request-ID", "abc"], { requestId: "abc" }],
    ["has no request id without it", ["Host", "a", "X-Request", "abc"], { requestId: undefined }],
    [
      "has no request id when it came twice",
      ["x-request-id", "a", "X-Request-Id", "b"],
      { requestId: undefined },
    ],
    ["has no Connection without one", ["host", "a"], { connection: undefined }],
    [
      "joins every Connection field",
      ["Connection", "keep-alive", "host", "a", "connection", "X-Secret"],
      { connection: "keep-alive, X-Secret" },
    ],
    ["takes the most fields Node keeps", manyFields(MAX_REQUEST_HEADERS), { problem: undefined }],
    ["refuses one field more", manyFields(MAX_REQUEST_HEADERS + 1), { problem: "too_many_headers" }],
  ])("%s", (_case, raw, expected) => {
    const head = new RequestHead(raw);
    for (const [fact, value] of Object.entries(expected)) {
      expect([fact, head[fact as keyof RequestHead]]).toEqual([fact, value]);
    }
  });

  it.each<[string, string[], string, string | null]>([
    ["finds a field by its lower-case name", ["X-Version", "two"], "x-version", "two"],
    ["joins repeated fields by a comma, as a fetch Headers does", ["a", "1", "A", "2"], "a", "1, 2"],
    ["keeps an empty value", ["x-empty", ""], "x-empty", ""],
    ["answers null for a field not sent", ["a", "1"], "b", null],
  ])("%s", (_case, raw, name, value) => {
    expect(new RequestHead(raw).get(name)).toBe(value);
  });
});

describe("header matches over Node's rawHeaders", () => {
  it("reads each field of the request a bounded number of times, however many rules match on headers", () => {
    const rules = 1_000;
    const fields = 500;
    const table = buildRouteTable(
      [
        route("httproute:shop/many", {
          hostnames: ["h.test"],
          rules: Array.from({ length: rules }, (_, i) =>
            rule(`b${i}`, exact("/x", { headers: { "x-variant": `v${i}` } })),
          ),
        }),
      ].map((record) => ({ route: record })),
    );
    const raw = counted(manyFields(fields));
    const head = new RequestHead(raw.raw);
    expect(matchRoute(table, "h.test", { ...request("/x"), headers: head })).toBeUndefined();
    expect(raw.reads()).toBeLessThanOrEqual(4 * 2 * fields);
  });

  it("reads no field past the first pass when no route matches on headers", () => {
    const table = buildRouteTable([
      { route: route("httproute:shop/a", { rules: [rule("a", exact("/x"))] }) },
    ]);
    const raw = counted(manyFields(10));
    const head = new RequestHead(raw.raw);
    const afterFirstPass = raw.reads();
    expect(matchRoute(table, "h.test", { ...request("/x"), headers: head })?.route.id).toBe(
      "httproute:shop/a",
    );
    expect(raw.reads()).toBe(afterFirstPass);
  });
});

import { describe, expect, it } from "vitest";
import { CORS } from "../../../store/filters/cors.js";
import type { GatewayFilter } from "../../../store/filters/filter-kind.js";

const translateCors = (filters: readonly GatewayFilter[]) =>
  CORS.translate(filters, { resolveBackendRef: () => undefined });

const corsFilter = (cors: Record<string, unknown>) => ({ type: "CORS", cors }) as GatewayFilter;

describe("CORS filter translation", () => {
  it("lower-cases origins and names, and defaults credentials to false and maxAge to 5 s", () => {
    const translated = translateCors([
      corsFilter({
        allowOrigins: ["HTTPS://*.Bar.com", "*"],
        allowMethods: ["GET"],
        allowHeaders: ["X-Header-1"],
        exposeHeaders: ["X-Header-3"],
      }),
    ]);
    expect(translated).toEqual({
      ok: true,
      value: {
        allowOrigins: ["https://*.bar.com", "*"],
        allowMethods: ["GET"],
        allowHeaders: ["x-header-1"],
        exposeHeaders: ["x-header-3"],
        allowCredentials: false,
        maxAge: 5,
      },
    });
  });

  it("gives no CORS for a rule without the filter (the filter list hands each kind its own filters)", () => {
    expect(translateCors([])).toEqual({
      ok: true,
      value: undefined,
    });
  });

  it.each([
    ["an origin with a path", { allowOrigins: ["https://foo.com/x"] }, "origin"],
    ["an origin without a scheme", { allowOrigins: ["foo.com"] }, "origin"],
    ["a wildcard inside a host", { allowOrigins: ["https://a.*.com"] }, "origin"],
    ["an unknown method", { allowMethods: ["FETCH"] }, "method"],
    ["a header name with a space", { allowHeaders: ["x header"] }, "field name"],
    ["a negative maxAge", { maxAge: -1 }, "CORS"],
  ])("drops the rule for %s", (_name, cors, quoted) => {
    const translated = translateCors([corsFilter(cors)]);
    expect(translated.ok).toBe(false);
    if (!translated.ok) expect(translated.error).toContain(quoted);
  });

  it("refuses two CORS filters in one rule", () => {
    const translated = translateCors([corsFilter({}), corsFilter({})]);
    expect(translated.ok).toBe(false);
  });
});

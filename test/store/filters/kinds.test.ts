import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { BackendFiltersSchema, FILTER_KINDS, RouteFiltersSchema } from "../../../store/filters/kinds.js";
import { translateRuleFilters } from "../../../store/filters/translate.js";

/** The one table of filter kinds (store/filters/kinds.ts) is what the record schema and the translation read. */
describe("the filter kinds", () => {
  it("name each Gateway API type and record field once", () => {
    expect(FILTER_KINDS.map((kind) => kind.type)).toEqual([
      "RequestHeaderModifier",
      "ResponseHeaderModifier",
      "RequestRedirect",
      "URLRewrite",
      "RequestMirror",
      "CORS",
    ]);
    expect(new Set(FILTER_KINDS.map((kind) => kind.field)).size).toBe(FILTER_KINDS.length);
  });

  it("are the record's filter fields, in their order (the order of a record's bytes)", () => {
    expect(Object.keys(RouteFiltersSchema.entries)).toEqual(FILTER_KINDS.map((kind) => kind.field));
    const parsed = v.parse(RouteFiltersSchema, {
      cors: {
        allowOrigins: [],
        allowMethods: [],
        allowHeaders: [],
        exposeHeaders: [],
        allowCredentials: false,
        maxAge: 5,
      },
      requestHeaders: { set: [], add: [], remove: ["x-a"] },
    });
    expect(JSON.stringify(parsed)).toBe(
      '{"requestHeaders":{"set":[],"add":[],"remove":["x-a"]},"cors":{"allowOrigins":[],"allowMethods":[],"allowHeaders":[],"exposeHeaders":[],"allowCredentials":false,"maxAge":5}}',
    );
  });

  it("give a backendRef's filters the fields of the kinds a backendRef may hold", () => {
    expect(Object.keys(BackendFiltersSchema.entries)).toEqual([
      "requestHeaders",
      "responseHeaders",
      "rewrite",
    ]);
    expect(FILTER_KINDS.filter((kind) => kind.onBackendRef).map((kind) => kind.field)).toEqual([
      "requestHeaders",
      "responseHeaders",
      "rewrite",
    ]);
  });

  it("refuse a rule whose filter type no kind carries, since an unknown filter must not be skipped", () => {
    const rule = { paths: [{ type: "PathPrefix" }], hasBackends: true };
    const translated = translateRuleFilters([{ type: "ExtensionRef" }], rule, {
      resolveBackendRef: () => undefined,
    });
    expect(translated).toEqual({
      ok: false,
      error: { reason: "UnsupportedValue", message: "filter ExtensionRef is not supported" },
    });
  });
});

import { describe, expect, it } from "vitest";
import { addFields, flatFields, http1FieldsOf } from "../../../../functions/node/http2-front/h2-fields.js";

const http2ResponseFieldObject = (fields: string[]) => addFields({}, fields);

describe("addFields (a flat field list into node:http2's headers)", () => {
  it.each([
    ["Connection", "keep-alive"],
    ["Keep-Alive", "timeout=5"],
    ["Proxy-Connection", "keep-alive"],
    ["Transfer-Encoding", "chunked"],
    ["Upgrade", "h2c"],
    ["TE", "trailers"],
  ])("leaves out the connection-specific field %s", (name, value) => {
    expect(http2ResponseFieldObject([name, value, "x-kept", "yes"])).toEqual({ "x-kept": "yes" });
  });

  it("lower-cases names and keeps repeated fields as a list, in order", () => {
    expect(
      http2ResponseFieldObject(["Set-Cookie", "a=1", "content-type", "text/plain", "set-cookie", "b=2"]),
    ).toEqual({ "set-cookie": ["a=1", "b=2"], "content-type": "text/plain" });
  });

  it("leaves out pseudo-header fields and the names it is told to skip", () => {
    const fields = [":status", "200", "host", "a.example", "x-a", "1"];
    expect(addFields({}, fields, new Set(["host"]))).toEqual({ "x-a": "1" });
  });
});

describe("flatFields", () => {
  it("lists node:http2's headers flat, repeated values in order, without pseudo-header fields", () => {
    expect(flatFields({ ":status": "200", "set-cookie": ["a=1", "b=2"], "x-a": "1" })).toEqual([
      "set-cookie",
      "a=1",
      "set-cookie",
      "b=2",
      "x-a",
      "1",
    ]);
  });
});

describe("http1FieldsOf", () => {
  it.each([
    [
      [":method", "GET", ":path", "/", ":authority", "a.example", "x-a", "1"],
      ["x-a", "1"],
    ],
    [
      ["cookie", "a=1", "x-a", "1", "Cookie", "b=2"],
      ["x-a", "1", "cookie", "a=1; b=2"],
    ],
    [[":scheme", "http"], []],
  ])("turns %j into %j", (raw, fields) => {
    expect(http1FieldsOf(raw)).toEqual(fields);
  });
});

import { describe, expect, it } from "vitest";
import { http2ResponseFieldObject } from "../../../../functions/node/http2/connection-headers.js";
import { http1FieldsOf } from "../../../../functions/node/http2/h2-to-h1-exchange.js";

describe("http2ResponseFieldObject", () => {
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

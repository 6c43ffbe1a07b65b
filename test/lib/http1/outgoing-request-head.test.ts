import { describe, expect, it } from "vitest";
import { framingOf, InvalidRequestHeadError, requestHead } from "../../../lib/http1/outgoing-request-head.js";

describe("the upstream request head", () => {
  it("is the request line, one line per field in order, and an empty line", () => {
    expect(requestHead("GET", "/a?b=c", ["host", "app.example", "x-a", "1", "x-a", ""], "none")).toBe(
      "GET /a?b=c HTTP/1.1\r\nhost: app.example\r\nx-a: 1\r\nx-a: \r\n\r\n",
    );
  });

  it.each([
    ["chunked", "transfer-encoding: chunked\r\n"],
    ["empty", "content-length: 0\r\n"],
    ["declared", ""],
  ] as const)("frames %s content with %j after the fields", (framing, line) => {
    expect(requestHead("POST", "/", ["host", "h"], framing)).toBe(
      `POST / HTTP/1.1\r\nhost: h\r\n${line}\r\n`,
    );
  });

  it("keeps Latin-1 bytes of values as they are", () => {
    expect(requestHead("GET", "/caf\xe9", ["x-a", "caf\xe9"], "none")).toContain("x-a: caf\xe9\r\n");
  });

  it.each([
    ["a line break in a value", "GET", "/", ["x-a", "1\r\nx-injected: 1"]],
    ["a bare LF in a value", "GET", "/", ["x-a", "1\nx"]],
    ["a NUL in a value", "GET", "/", ["x-a", "1\u0000"]],
    ["a character past Latin-1 in a value", "GET", "/", ["x-a", "✓"]],
    ["a colon in a name", "GET", "/", ["x:a", "1"]],
    ["a space in a name", "GET", "/", ["x a", "1"]],
    ["an empty name", "GET", "/", ["", "1"]],
    ["a space in the path", "GET", "/a b", []],
    ["a line break in the path", "GET", "/a\r\nx: 1", []],
    ["an empty path", "GET", "", []],
    ["a method that is not a token", "GE T", "/", []],
  ])("is refused with %s, before anything is written", (_what, method, path, fields) => {
    expect(() => requestHead(method, path, fields, "none")).toThrow(InvalidRequestHeadError);
  });

  it.each([
    ["POST", ["host", "h", "Content-Length", "5"], true, "declared"],
    ["POST", ["host", "h", "content-length", "0"], false, "declared"],
    ["POST", ["host", "h"], true, "chunked"],
    ["PUT", ["host", "h"], true, "chunked"],
    ["POST", ["host", "h"], false, "empty"],
    ["PATCH", ["host", "h"], false, "empty"],
    ["PUT", ["host", "h"], false, "empty"],
    ["GET", ["host", "h"], false, "none"],
    ["DELETE", ["host", "h"], false, "none"],
  ])("frames %s %j (a body: %s) as %s", (method, fields, hasBody, expected) => {
    expect(framingOf(method, fields, hasBody)).toBe(expected);
  });
});

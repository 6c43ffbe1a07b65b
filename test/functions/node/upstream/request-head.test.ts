import { describe, expect, it } from "vitest";
import {
  declaresLength,
  InvalidRequestHeadError,
  requestHead,
} from "../../../../functions/node/upstream/request-head.js";

describe("the upstream request head", () => {
  it("is the request line, one line per field in order, and an empty line", () => {
    expect(requestHead("GET", "/a?b=c", ["host", "app.example", "x-a", "1", "x-a", ""], false)).toBe(
      "GET /a?b=c HTTP/1.1\r\nhost: app.example\r\nx-a: 1\r\nx-a: \r\n\r\n",
    );
  });

  it("says the body is chunked when asked to", () => {
    expect(requestHead("POST", "/", ["host", "h"], true)).toBe(
      "POST / HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n",
    );
  });

  it("keeps Latin-1 bytes of values as they are", () => {
    expect(requestHead("GET", "/caf\xe9", ["x-a", "caf\xe9"], false)).toContain("x-a: caf\xe9\r\n");
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
    expect(() => requestHead(method, path, fields, false)).toThrow(InvalidRequestHeadError);
  });

  it.each([
    [["host", "h", "Content-Length", "5"], true],
    [["host", "h", "content-length", "0"], true],
    [["host", "h", "content-type", "text/plain"], false],
  ])("%j declares a length: %s", (fields, expected) => {
    expect(declaresLength(fields)).toBe(expected);
  });
});

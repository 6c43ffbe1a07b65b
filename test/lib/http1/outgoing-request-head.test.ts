import { describe, expect, it } from "vitest";
import type { OutgoingRequest } from "../../../lib/http-exchange.js";
import { InvalidRequestHeadError, requestHead } from "../../../lib/http1/outgoing-request-head.js";

const BODY = { pipe: () => undefined } as unknown as OutgoingRequest["body"];

function head(
  method: string,
  path: string,
  headers: string[],
  content: Partial<Pick<OutgoingRequest, "body" | "contentLength" | "transferCodings">> = {},
): string {
  return requestHead({
    method,
    path,
    headers,
    body: content.body ?? null,
    contentLength: content.contentLength,
    transferCodings: content.transferCodings,
  });
}

describe("the outgoing request head", () => {
  it("is the request line, one line per field in order, and an empty line", () => {
    expect(head("GET", "/a?b=c", ["host", "app.example", "x-a", "1", "x-a", ""])).toBe(
      "GET /a?b=c HTTP/1.1\r\nhost: app.example\r\nx-a: 1\r\nx-a: \r\n\r\n",
    );
  });

  it.each<[string, string, Parameters<typeof head>[3], string]>([
    ["a body of known length", "POST", { body: BODY, contentLength: 5 }, "content-length: 5\r\n"],
    ["a body of unknown length", "POST", { body: BODY }, "transfer-encoding: chunked\r\n"],
    [
      "a body with other codings",
      "POST",
      { body: BODY, transferCodings: "gzip" },
      "transfer-encoding: gzip, chunked\r\n",
    ],
    ["no body, said empty", "GET", { contentLength: 0 }, "content-length: 0\r\n"],
    ["no body for a method that expects one", "PUT", {}, "content-length: 0\r\n"],
    ["no body for a method that expects none", "GET", {}, ""],
  ])("frames %s after the fields", (_what, method, content, line) => {
    expect(head(method, "/", ["host", "h"], content)).toBe(`${method} / HTTP/1.1\r\nhost: h\r\n${line}\r\n`);
  });

  it("leaves out the caller's own framing fields: the framing is the client's to write", () => {
    const fields = ["host", "h", "Content-Length", "40", "transfer-encoding", "chunked"];
    expect(head("POST", "/", fields, { body: BODY, contentLength: 3 })).toBe(
      "POST / HTTP/1.1\r\nhost: h\r\ncontent-length: 3\r\n\r\n",
    );
  });

  it("keeps Latin-1 bytes of values as they are", () => {
    expect(head("GET", "/caf\xe9", ["x-a", "caf\xe9"])).toContain("x-a: caf\xe9\r\n");
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
    expect(() => head(method, path, fields)).toThrow(InvalidRequestHeadError);
  });

  it("is refused when it declares content it has no body for", () => {
    expect(() => head("POST", "/", ["host", "h"], { contentLength: 3 })).toThrow(InvalidRequestHeadError);
  });
});

import { describe, expect, it } from "vitest";
import { MalformedResponseError } from "../../../lib/http1/client-errors.js";
import {
  MAX_RESPONSE_HEAD_BYTES,
  ResponseParser,
  type ResponseSink,
} from "../../../lib/http1/response-parser.js";

interface Heard {
  heads: [number, string, string[]][];
  body: string;
  ends: boolean[];
}

/** A parser whose sink writes down what it heard; `takes` decides what onResponseData answers. */
function parserFor(takes: () => boolean = () => true) {
  const heard: Heard = { heads: [], body: "", ends: [] };
  const sink: ResponseSink = {
    onResponseHead: ({ status, reason, fields }) => {
      heard.heads.push([status, reason, fields]);
    },
    onResponseData: (chunk) => {
      heard.body += chunk.toString("latin1");
      return takes();
    },
    onResponseEnd: (reusable) => heard.ends.push(reusable),
  };
  const parser = new ResponseParser(sink);
  return { parser, heard };
}

/** Feeds `raw` in pieces of `size` bytes (whole when undefined); `closed` tells the parser the socket ended. */
function parse(raw: string | Buffer, options: { size?: number; noBody?: boolean; closed?: boolean } = {}) {
  const bytes = typeof raw === "string" ? Buffer.from(raw, "latin1") : raw;
  const { parser, heard } = parserFor();
  parser.expect(options.noBody ?? false);
  const size = options.size ?? bytes.length;
  for (let at = 0; at < bytes.length; at += size) parser.execute(bytes.subarray(at, at + size));
  if (options.closed) parser.closed();
  return { heard, parser };
}

const OK = "HTTP/1.1 200 OK\r\n";

describe("the upstream response parser", () => {
  it.each<[string, string, { noBody?: boolean; closed?: boolean }, number, string[], string, boolean]>([
    [
      "a Content-Length body",
      `${OK}Content-Length: 5\r\n\r\nhello`,
      {},
      200,
      ["content-length", "5"],
      "hello",
      true,
    ],
    [
      "a chunked body with extensions and trailers",
      `${OK}Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1 ;x;q="a \\" b"\r\n!\r\n0\r\nx-trailer: t\r\n\r\n`,
      {},
      200,
      ["transfer-encoding", "chunked"],
      "hello!",
      true,
    ],
    ["a 204 with no content", "HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n", {}, 204, ["x-a", "1"], "", true],
    [
      "a 304 whose Content-Length describes the resource",
      "HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n",
      {},
      304,
      ["content-length", "9"],
      "",
      true,
    ],
    [
      "the answer to HEAD",
      `${OK}content-length: 9\r\n\r\n`,
      { noBody: true },
      200,
      ["content-length", "9"],
      "",
      true,
    ],
    [
      "a body delimited by the close",
      `${OK}x-a: 1\r\n\r\nuntil close`,
      { closed: true },
      200,
      ["x-a", "1"],
      "until close",
      false,
    ],
    [
      "a coding other than chunked last, read until close",
      `${OK}transfer-encoding: chunked, gzip\r\n\r\nzz`,
      { closed: true },
      200,
      ["transfer-encoding", "chunked, gzip"],
      "zz",
      false,
    ],
    [
      "Connection: close",
      `${OK}Connection: Close\r\ncontent-length: 1\r\n\r\nx`,
      {},
      200,
      ["connection", "Close", "content-length", "1"],
      "x",
      false,
    ],
    [
      "HTTP/1.0",
      "HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx",
      {},
      200,
      ["content-length", "1"],
      "x",
      false,
    ],
    [
      "HTTP/1.0 with a Transfer-Encoding, never reused (RFC 9112 §6.1)",
      "HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
      {},
      200,
      ["connection", "keep-alive", "transfer-encoding", "chunked"],
      "x",
      false,
    ],
    [
      "chunk sizes with leading zeros and whitespace before extensions",
      `${OK}transfer-encoding: chunked\r\n\r\n00000000000002 ;a=b\r\nok\r\n0\r\n\r\n`,
      {},
      200,
      ["transfer-encoding", "chunked"],
      "ok",
      true,
    ],
    [
      "HTTP/1.0 with keep-alive",
      "HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 1\r\n\r\nx",
      {},
      200,
      ["connection", "keep-alive", "content-length", "1"],
      "x",
      true,
    ],
    [
      "interim answers before the final one",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
      {},
      201,
      ["content-length", "0"],
      "",
      true,
    ],
    [
      "whitespace around values",
      `${OK}X-A: \t a b \t\r\nContent-Length: 2\r\n\r\nok`,
      {},
      200,
      ["x-a", "a b", "content-length", "2"],
      "ok",
      true,
    ],
    [
      "a status line without a reason",
      "HTTP/1.1 200\r\ncontent-length: 0\r\n\r\n",
      {},
      200,
      ["content-length", "0"],
      "",
      true,
    ],
  ])("reads %s", (_what, raw, options, status, fields, body, reusable) => {
    for (const size of [undefined, 1, 3, 7]) {
      const { heard } = parse(raw, { ...options, size });
      expect(heard.heads.map(([s, , f]) => [s, f])).toEqual([[status, fields]]);
      expect(heard.body).toBe(body);
      expect(heard.ends).toEqual([reusable]);
    }
  });

  it("keeps field values byte for byte as Latin-1 and decodes the reason phrase as UTF-8, as undici did", () => {
    const raw = Buffer.concat([
      Buffer.from("HTTP/1.1 200 ", "latin1"),
      Buffer.from("OK ✓", "utf8"),
      Buffer.from("\r\nx-raw: caf\xe9 ", "latin1"),
      Buffer.from("✓", "utf8"),
      Buffer.from("\r\ncontent-length: 0\r\n\r\n", "latin1"),
    ]);
    const { heard } = parse(raw);
    expect(heard.heads[0]?.[1]).toBe("OK ✓");
    expect(Buffer.from(heard.heads[0]?.[2][1] ?? "", "latin1")).toEqual(
      Buffer.concat([Buffer.from("caf\xe9 ", "latin1"), Buffer.from("✓", "utf8")]),
    );
  });

  it("reads the Keep-Alive timeout hint in milliseconds", () => {
    const { parser } = parse(`${OK}Keep-Alive: max=100, timeout=5\r\ncontent-length: 0\r\n\r\n`);
    expect(parser.keepAliveHintMs).toBe(5_000);
  });

  it.each([
    ["a malformed status line", "HTTP/1.1 2000 OK\r\n\r\n"],
    ["another protocol", "HTTP/2 200 OK\r\n\r\n"],
    ["whitespace before a colon (RFC 9112 §5.1)", `${OK}x-a : 1\r\n\r\n`],
    ["an obs-fold line (RFC 9112 §5.2)", `${OK}x-a: 1\r\n  folded\r\n\r\n`],
    ["a bare LF inside the head", `${OK}x-a: 1\nx-b: 2\r\n\r\n`],
    ["a NUL in a value", `${OK}x-a: 1\u0000\r\n\r\n`],
    ["a field with no colon", `${OK}x-a\r\n\r\n`],
    [
      "Content-Length next to Transfer-Encoding (RFC 9112 §6.1)",
      `${OK}content-length: 3\r\ntransfer-encoding: chunked\r\n\r\n`,
    ],
    ["two Content-Lengths that differ", `${OK}content-length: 3\r\ncontent-length: 4\r\n\r\nabc`],
    ["a repeated Content-Length, even equal", `${OK}content-length: 3\r\ncontent-length: 3\r\n\r\nabc`],
    ["a Content-Length that is not digits", `${OK}content-length: -1\r\n\r\n`],
    ["a Content-Length list", `${OK}content-length: 3, 3\r\n\r\nabc`],
    ["a chunk size that is not hex", `${OK}transfer-encoding: chunked\r\n\r\nzz\r\n`],
    [
      "whitespace after a chunk size with no extension",
      `${OK}transfer-encoding: chunked\r\n\r\n2 \r\nab\r\n`,
    ],
    ["whitespace inside a chunk extension", `${OK}transfer-encoding: chunked\r\n\r\n2; a=b\r\nab\r\n`],
    ["a chunk extension without a name", `${OK}transfer-encoding: chunked\r\n\r\n2;=b\r\nab\r\n`],
    ["an unclosed quoted chunk extension", `${OK}transfer-encoding: chunked\r\n\r\n2;a="b\r\nab\r\n`],
    ["a status code past 599 (RFC 9110 §15)", "HTTP/1.1 600 Custom\r\ncontent-length: 0\r\n\r\n"],
    ["chunk data longer than its size", `${OK}transfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n`],
    ["a malformed trailer", `${OK}transfer-encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n`],
    ["a switch of protocols nobody asked for", "HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n"],
    ["a head larger than 16 KiB", `${OK}x-a: ${"a".repeat(MAX_RESPONSE_HEAD_BYTES)}\r\n\r\n`],
    ["a head larger than 16 KiB that never ends", `${OK}x-a: ${"a".repeat(MAX_RESPONSE_HEAD_BYTES)}`],
  ])("refuses %s", (_what, raw) => {
    for (const size of [undefined, 5]) {
      expect(() => parse(raw, { size })).toThrow(MalformedResponseError);
    }
  });

  it("refuses bytes while no response is due", () => {
    const { parser } = parserFor();
    expect(() => parser.execute(Buffer.from(`${OK}\r\n`))).toThrow(MalformedResponseError);
  });

  it.each([
    ["inside the head", `${OK}content-le`],
    ["inside a Content-Length body", `${OK}content-length: 5\r\n\r\nhel`],
    ["inside a chunked body", `${OK}transfer-encoding: chunked\r\n\r\n5\r\nhel`],
  ])("reports a close %s as a response cut short", (_what, raw) => {
    expect(() => parse(raw, { closed: true })).toThrow(MalformedResponseError);
  });

  it("ends a response followed by stray bytes as not reusable, and never parses those bytes", () => {
    const { heard } = parse(`${OK}content-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n`);
    expect(heard.heads).toHaveLength(1);
    expect(heard.ends).toEqual([false]);
  });

  it("stops handing on the body while paused and goes on after resume, ending last", () => {
    let room = false;
    const { parser, heard } = parserFor(() => room);
    parser.expect(false);
    // Chunks of 1 KiB, as small ones read together are handed on together.
    const [a, c] = ["a".repeat(1024), "c".repeat(1024)];
    parser.execute(
      Buffer.from(`${OK}transfer-encoding: chunked\r\n\r\n400\r\n${a}\r\n400\r\n${c}\r\n0\r\n\r\n`, "latin1"),
    );
    expect([heard.body, heard.ends, parser.paused]).toEqual([a, [], true]);
    room = true;
    parser.resume();
    expect([heard.body, heard.ends, parser.paused]).toEqual([a + c, [true], false]);
  });

  it("ends a close-delimited body that closed while paused once it resumes", () => {
    let room = false;
    const { parser, heard } = parserFor(() => room);
    parser.expect(false);
    parser.execute(Buffer.from(`${OK}\r\nab`, "latin1"));
    parser.closed();
    expect(heard.ends).toEqual([]);
    room = true;
    parser.resume();
    expect([heard.body, heard.ends]).toEqual(["ab", [false]]);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ResponseParser } from "../../../lib/http1/response-parser.js";
import { llhttpReads } from "./llhttp-oracle.js";

/**
 * The client's response parser against Node's own (llhttp), on responses a backend could send: valid ones, and
 * the same with bytes changed where framing is decided. Whatever the client reads to its end, Node reads the
 * same way (status, fields, body, and no reuse Node would not allow), whichever way the bytes are cut across
 * reads; and every valid response is read. The client may refuse what Node reads: it is the stricter of the two.
 */

interface OursReading {
  status?: number;
  reason?: string;
  fields?: string[];
  body: string;
  complete: boolean;
  reusable?: boolean;
  error?: unknown;
}

/** What the client's parser reads of `raw`, fed in the pieces `cuts` make, the connection closing after it. */
function oursReads(raw: Buffer, noBody: boolean, cuts: number[]): OursReading {
  const read: OursReading = { body: "", complete: false };
  const parser = new ResponseParser({
    onResponseHead: ({ status, reason, fields }) => Object.assign(read, { status, reason, fields }),
    onResponseData: (chunk) => {
      read.body += chunk.toString("latin1");
      return true;
    },
    onResponseEnd: (reusable) => Object.assign(read, { complete: true, reusable }),
  });
  parser.expect(noBody);
  try {
    let from = 0;
    for (const cut of [...cuts.filter((at) => at < raw.length).sort((a, b) => a - b), raw.length]) {
      if (cut > from) parser.execute(raw.subarray(from, cut));
      from = Math.max(from, cut);
      if (read.complete) return read;
    }
    parser.closed();
  } catch (error) {
    read.error = error;
  }
  return read;
}

const latin1 = (codes: number[]) => String.fromCharCode(...codes);
const token = fc
  .array(fc.constantFrom(..."abcxyzABC-_.!#0129".split("")), { minLength: 1, maxLength: 8 })
  .map((chars) => chars.join(""));
/** Field content: visible ASCII and obs-text, whitespace only inside. */
const fieldValue = fc
  .array(
    fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x20)),
    {
      maxLength: 12,
    },
  )
  .map((codes) => latin1(codes).trim());
const chunkExtension = fc.oneof(
  token.map((name) => `;${name}`),
  fc.tuple(token, token).map(([name, value]) => `;${name}=${value}`),
  fc.tuple(token, fieldValue).map(([name, value]) => `;${name}="${value.replace(/["\\]/g, "\\$&")}"`),
);

interface Response {
  readonly head: string;
  readonly body: string;
}

/** A valid response head line by line, and its body framed one of the ways RFC 9112 §6 allows. */
const validResponse = fc
  .record({
    version: fc.constantFrom("1.1", "1.1", "1.0"),
    interim: fc.constantFrom(
      "",
      "",
      "HTTP/1.1 100 Continue\r\n\r\n",
      "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n",
    ),
    status: fc.constantFrom(200, 201, 204, 304, 404, 500, 503, 599),
    reason: fc.constantFrom("", " OK", " Not Found", " caf\xe9", " a\tb"),
    fields: fc.array(fc.tuple(token, fieldValue, fc.constantFrom(": ", ":", ":\t", ":  ")), { maxLength: 5 }),
    connection: fc.constantFrom(
      "",
      "connection: close\r\n",
      "connection: keep-alive\r\n",
      "Keep-Alive: timeout=5\r\n",
    ),
    framing: fc.constantFrom("length", "chunked", "coded-chunked", "coded-close", "close"),
    content: fc.string({ maxLength: 40 }).map((text) => Buffer.from(text, "utf8").toString("latin1")),
    chunks: fc.array(
      fc.tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom(0, 1, 3), fc.option(chunkExtension)),
      {
        maxLength: 4,
      },
    ),
    trailers: fc.array(fc.tuple(token, fieldValue), { maxLength: 2 }),
  })
  .map((r): Response => {
    const lines = r.fields.map(([name, value, colon]) => `x-${name}${colon}${value}\r\n`).join("");
    let framing = "";
    let body = r.content;
    if (r.framing === "length") framing = `content-length: ${body.length}\r\n`;
    else if (r.framing === "coded-close") framing = "transfer-encoding: gzip\r\n";
    else if (r.framing !== "close") {
      framing = `transfer-encoding: ${r.framing === "chunked" ? "chunked" : "gzip, chunked"}\r\n`;
      let rest = body;
      body = "";
      for (const [size, zeros, extension] of r.chunks) {
        const data = rest.slice(0, size).padEnd(size, "z");
        rest = rest.slice(size);
        body += `${"0".repeat(zeros)}${data.length.toString(16)}${extension ?? ""}\r\n${data}\r\n`;
      }
      body += `0\r\n${r.trailers.map(([name, value]) => `x-${name}: ${value}\r\n`).join("")}\r\n`;
    }
    const head = `${r.interim}HTTP/${r.version} ${r.status}${r.reason}\r\n${lines}${r.connection}${framing}\r\n`;
    return { head, body };
  });

/** Bytes that decide framing, put where they may change it. */
const mutations = fc.array(
  fc.record({
    at: fc.nat(),
    remove: fc.nat({ max: 2 }),
    insert: fc.constantFrom(
      ...[
        "",
        " ",
        "\t",
        "\r",
        "\n",
        "\r\n",
        ":",
        ";",
        ",",
        "=",
        "0",
        "f",
        "a",
        "\0",
        "\x7f",
        "\x80",
        "\xa0",
        '"',
      ],
      ...["\\", "chunked", "close", "keep-alive", "content-length: 1\r\n", "transfer-encoding: chunked\r\n"],
    ),
  }),
  { minLength: 1, maxLength: 3 },
);

const cuts = fc.array(fc.nat({ max: 400 }), { maxLength: 4 });

function expectSameReading(raw: Buffer, noBody: boolean, pieces: number[]): OursReading {
  const ours = oursReads(raw, noBody, pieces);
  if (!ours.complete) return ours;
  const node = llhttpReads(raw, noBody);
  const shown = JSON.stringify(raw.toString("latin1"));
  expect(node.complete, `Node reads no whole response in ${shown} (${node.error})`).toBe(true);
  expect([node.status, node.fields, node.body], shown).toEqual([ours.status, ours.fields, ours.body]);
  // Node judges keep-alive before it is told the response is to HEAD: only other responses compare.
  if (ours.reusable && !noBody) expect(node.keepAlive, shown).toBe(true);
  return ours;
}

describe("the response parser against Node's own", () => {
  it("reads every valid response to its end, as Node does", () => {
    fc.assert(
      fc.property(validResponse, fc.boolean(), cuts, ({ head, body }, noBody, pieces) => {
        const ours = expectSameReading(Buffer.from(head + body, "latin1"), noBody, pieces);
        expect(ours.error, head).toBeUndefined();
        expect(ours.complete).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("reads nothing Node reads otherwise when bytes that decide framing change", () => {
    fc.assert(
      fc.property(validResponse, mutations, fc.boolean(), cuts, ({ head, body }, changes, noBody, pieces) => {
        let raw = head + body;
        for (const change of changes) {
          const at = change.at % (raw.length + 1);
          raw = raw.slice(0, at) + change.insert + raw.slice(at + change.remove);
        }
        expectSameReading(Buffer.from(raw, "latin1"), noBody, pieces);
      }),
      { numRuns: 1_500 },
    );
  });
});

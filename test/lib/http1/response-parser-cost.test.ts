import { describe, expect, it } from "vitest";
import { MalformedResponseError } from "../../../lib/http1/client-errors.js";
import {
  MAX_TRAILER_BYTES,
  MAX_TRAILER_FIELDS,
  ResponseParser,
  type ResponseSink,
} from "../../../lib/http1/response-parser.js";

/**
 * What a hostile backend's bytes cost the router: every input is parsed in time linear in its length, so no
 * answer can hold the event loop (and every other host's requests) for long. Linearity is judged without a
 * clock reading of its own: the cost of 4n bytes against the cost of n bytes of the same shape, which is about
 * 4 when linear and about 16 when quadratic; the smallest of a few rounds is taken (noise only adds).
 */

const sink: ResponseSink = {
  onResponseHead: () => undefined,
  onResponseData: () => true,
  onResponseEnd: () => undefined,
};

/** Parses `raw` fed `piece` bytes at a time (whole when undefined); throws what the parser throws. */
function parse(raw: Buffer, piece?: number): void {
  const parser = new ResponseParser(sink);
  parser.expect(false);
  if (piece === undefined) parser.execute(raw);
  else for (let at = 0; at < raw.length; at += piece) parser.execute(raw.subarray(at, at + piece));
}

/** Milliseconds spent running `work` `runs` times, stopping early once `budgetMs` is spent. */
function spent(
  work: () => void,
  runs: number,
  budgetMs = Number.POSITIVE_INFINITY,
): { ms: number; runs: number } {
  const start = performance.now();
  for (let run = 1; run <= runs; run++) {
    work();
    const ms = performance.now() - start;
    if (ms > budgetMs) return { ms, runs: run };
  }
  return { ms: performance.now() - start, runs };
}

/** How much more one parse of `large` costs than one of `small`: the median of five rounds, after a warm-up. */
function growth(small: () => void, large: () => void): number {
  spent(small, 3);
  spent(large, 3);
  const ratios: number[] = [];
  for (let round = 0; round < 5; round++) {
    let runs = 0;
    const started = performance.now();
    while (runs < 3 || performance.now() - started < 20) {
      small();
      runs++;
    }
    const smallMs = (performance.now() - started) / runs;
    // A quadratic parse would take 16 times as long per run: give up on it well before.
    const big = spent(large, runs, 40 * smallMs * runs);
    ratios.push(big.ms / big.runs / smallMs);
  }
  const sorted = ratios.sort((a, b) => a - b);
  return sorted[2] as number;
}

const OK = "HTTP/1.1 200 OK\r\n";
/** A value of spaces and tabs with field content after them: what makes a backtracking pattern quadratic. */
const spacesThenContent = (bytes: number) => `a${" \t".repeat(bytes / 2)}b`;
const latin1 = (text: string) => Buffer.from(text, "latin1");

describe("the cost of a response to the parser", () => {
  it("grows linearly with a header value of alternating spaces and tabs", () => {
    const head = (bytes: number) =>
      latin1(`${OK}x-a: ${spacesThenContent(bytes)}\r\ncontent-length: 0\r\n\r\n`);
    const [small, large] = [head(3_900), head(15_600)];
    expect(
      growth(
        () => parse(small),
        () => parse(large),
      ),
    ).toBeLessThan(8);
  });

  it("grows linearly with a trailer field of alternating spaces and tabs", () => {
    const trailer = (bytes: number) =>
      latin1(`${OK}transfer-encoding: chunked\r\n\r\n0\r\nx-t: ${spacesThenContent(bytes)}\r\n\r\n`);
    const [small, large] = [trailer(1_000), trailer(4_000)];
    expect(
      growth(
        () => parse(small),
        () => parse(large),
      ),
    ).toBeLessThan(8);
  });

  it("hands a body of 1-byte chunks on in one piece per read, not one per byte", () => {
    const pieces: Buffer[] = [];
    const parser = new ResponseParser({ ...sink, onResponseData: (piece) => pieces.push(piece) > 0 });
    parser.expect(false);
    parser.execute(latin1(`${OK}transfer-encoding: chunked\r\n\r\n`));
    parser.execute(latin1("1\r\nx\r\n".repeat(10_000)));
    expect(pieces.map((piece) => piece.length)).toEqual([10_000]);
  });

  it.each([
    ["more trailer fields than it keeps", MAX_TRAILER_FIELDS + 1, 8],
    ["a trailer section larger than a head may be", 41, Math.ceil(MAX_TRAILER_BYTES / 40)],
  ])("refuses %s", (_what, fields, lineBytes) => {
    const line = `x-t: ${"t".repeat(lineBytes - 7)}\r\n`;
    const raw = latin1(`${OK}transfer-encoding: chunked\r\n\r\n0\r\n${line.repeat(fields)}\r\n`);
    expect(() => parse(raw)).toThrow(MalformedResponseError);
    expect(() => parse(raw, 7)).toThrow(MalformedResponseError);
  });

  it("accepts a trailer section within both bounds", () => {
    const raw = latin1(
      `${OK}transfer-encoding: chunked\r\n\r\n0\r\n${"x-t: 1\r\n".repeat(MAX_TRAILER_FIELDS)}\r\n`,
    );
    expect(() => parse(raw)).not.toThrow();
  });
});

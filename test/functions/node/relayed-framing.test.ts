import { describe, expect, it } from "vitest";
import { relayFraming } from "../../../functions/node/relayed-framing.js";
import type { ExchangeHead } from "../../../lib/http-exchange.js";

const head = (status: number, transferCodings?: string): ExchangeHead => ({
  status,
  reason: "",
  fields: [],
  transferCodings,
});

describe("the framing of a relayed HTTP/1.1 answer (relayFraming)", () => {
  it.each<[string, number, string | undefined, boolean, string[], string | undefined]>([
    ["a plain answer keeps its fields", 200, undefined, true, ["content-length", "2"], undefined],
    ["a 204 loses its Content-Length (RFC 9110 §8.6)", 204, undefined, true, [], undefined],
    ["a 304 keeps its Content-Length", 304, undefined, true, ["content-length", "2"], undefined],
    [
      "a gzip body goes on chunked after gzip",
      200,
      "gzip",
      true,
      ["content-length", "2", "transfer-encoding", "gzip, chunked"],
      undefined,
    ],
    [
      "codings in another case go on as they came",
      200,
      "GZIP, br",
      true,
      ["content-length", "2", "transfer-encoding", "GZIP, br, chunked"],
      undefined,
    ],
    [
      "a coding that only contains the word is not chunked",
      200,
      "xchunked, gzip",
      true,
      ["content-length", "2", "transfer-encoding", "xchunked, gzip, chunked"],
      undefined,
    ],
    [
      "chunked before another coding is refused",
      200,
      "chunked, gzip",
      true,
      ["content-length", "2"],
      "chunked before another coding",
    ],
    [
      "chunked in any case before another coding is refused",
      200,
      "gzip, Chunked, br",
      true,
      ["content-length", "2"],
      "chunked before another coding",
    ],
    [
      "a transfer-coded answer to an HTTP/1.0 client is refused",
      200,
      "gzip",
      false,
      ["content-length", "2"],
      "transfer-coded response for an HTTP/1.0 client",
    ],
  ])("%s", (_name, status, codings, speaks11, expected, refusal) => {
    const fields = ["content-length", "2"];
    const error = relayFraming(head(status, codings), fields, speaks11);
    expect([fields, error?.message]).toEqual([expected, refusal]);
  });
});

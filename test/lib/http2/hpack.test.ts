import { once } from "node:events";
import { connect } from "node:http2";
import { createServer, type Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HpackDecoder, HpackEncoder } from "../../../lib/http2/hpack.js";
import { huffmanDecode } from "../../../lib/http2/huffman.js";
import { eventually } from "../../support/eventually.js";
import { huffmanEncode } from "./huffman-encode.js";

const hex = (text: string) => Buffer.from(text.replace(/\s/g, ""), "hex");
const pairs = (fields: string[]) =>
  fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i], fields[i + 1]]] : []));

describe("HPACK decoding", () => {
  it("decodes RFC 7541 C.4's three requests on one connection, Huffman strings and the dynamic table", () => {
    const decoder = new HpackDecoder();
    expect(pairs(decoder.decode(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
    ]);
    expect(pairs(decoder.decode(hex("8286 84be 5886 a8eb 1064 9cbf")))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
      ["cache-control", "no-cache"],
    ]);
    expect(pairs(decoder.decode(hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")))).toEqual(
      [
        [":method", "GET"],
        [":scheme", "https"],
        [":path", "/index.html"],
        [":authority", "www.example.com"],
        ["custom-key", "custom-value"],
      ],
    );
  });

  it.each([
    ["an index of 0", "80"],
    ["an index past both tables", "be"],
    ["a string longer than the block", "0003 6162"],
    ["an integer of more octets than any header needs", "0f ff ff ff ff ff 01"],
    ["a table size update above the setting", "3f e1 3f"],
    ["a table size update after a field", "82 20"],
    ["a Huffman string padded with zeros", "0081 00 00"],
    ["a Huffman string holding EOS", "0084 ff ff ff ff 00"],
  ])("refuses %s as a compression error", (_, block) => {
    expect(() => new HpackDecoder().decode(hex(block))).toThrow(/cannot be decoded/);
  });

  it("decodes a header list larger than its bound whole, keeping the table, and says it is over", () => {
    const big = new HpackEncoder().encode(["x-big", "v".repeat(200)]);
    // Then a literal with incremental indexing, new name: "a: 1".
    const block = Buffer.concat([big, hex("40 01 61 01 31")]);
    const decoder = new HpackDecoder(4096, 100);
    expect(decoder.decode(block)).toEqual([]);
    expect(decoder.oversized).toBe(true);
    expect(decoder.decode(hex("be"))).toEqual(["a", "1"]);
    expect(decoder.oversized).toBe(false);
    expect(new HpackDecoder(4096, 300).decode(big)).toEqual(["x-big", "v".repeat(200)]);
  });

  it("evicts the oldest entries when the table is full, and an entry larger than the table empties it", () => {
    const decoder = new HpackDecoder(64);
    // Literal with incremental indexing, new name: "a: 1" (34 octets), then "b: 2" evicts it.
    decoder.decode(hex("40 01 61 01 31"));
    expect(decoder.decode(hex("be"))).toEqual(["a", "1"]);
    decoder.decode(hex("40 01 62 01 32"));
    expect(decoder.decode(hex("be"))).toEqual(["b", "2"]);
    expect(() => decoder.decode(hex("bf"))).toThrow(/cannot be decoded/);
    decoder.decode(hex(`40 01 63 21 ${"78".repeat(33)}`));
    expect(() => decoder.decode(hex("be"))).toThrow(/cannot be decoded/);
  });
});

describe("HPACK encoding", () => {
  it("uses the static table's pairs and names, and literals for the rest", () => {
    const block = new HpackEncoder().encode([":method", "POST", ":path", "/x", "te", "trailers"]);
    expect(block.toString("hex")).toBe(
      `83 04 02 2f78 00 02 7465 08 ${Buffer.from("trailers").toString("hex")}`.replace(/\s/g, ""),
    );
  });

  it("round-trips any fields through the decoder", () => {
    const token = fc.stringMatching(/^[a-z0-9-]{1,20}$/);
    const value = fc.string({
      unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)),
      maxLength: 300,
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(token, value), { maxLength: 30 }), (entries) => {
        const fields = entries.flat();
        expect(new HpackDecoder().decode(new HpackEncoder().encode(fields))).toEqual(fields);
      }),
    );
  });
});

describe("Huffman code", () => {
  it("encodes RFC 7541 C.4.1's authority as the RFC does, and decodes every octet back", () => {
    expect(huffmanEncode("www.example.com").toString("hex")).toBe("f1e3c2e5f23a6ba0ab90f4ff");
    const all = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join("");
    const coded = huffmanEncode(all);
    const out = Buffer.alloc(512);
    expect(out.toString("latin1", 0, huffmanDecode(coded, 0, coded.length, out))).toBe(all);
  });
});

describe("HPACK against nghttp2", () => {
  it("decodes the header blocks node:http2's client sends, Huffman-coded and indexed across requests", async () => {
    const blocks: Buffer[] = [];
    const server = createServer((socket: Socket) => {
      let buffered = Buffer.alloc(0);
      let prefaceSeen = false;
      socket.on("data", (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (!prefaceSeen) {
          if (buffered.length < 24) return;
          buffered = buffered.subarray(24);
          prefaceSeen = true;
          socket.write(hex("000000 04 00 00000000"));
        }
        while (buffered.length >= 9) {
          const length = buffered.readUIntBE(0, 3);
          if (buffered.length < 9 + length) return;
          // HEADERS with END_HEADERS and no padding or priority (nghttp2's requests are so).
          if (buffered[3] === 0x1) blocks.push(Buffer.from(buffered.subarray(9, 9 + length)));
          buffered = buffered.subarray(9 + length);
        }
      });
      socket.on("error", () => undefined);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", () => undefined);
    const sent = Array.from({ length: 5 }, (_, i) => ({
      ":path": `/svc.Echo/Call?n=${i}`,
      ":method": "POST",
      "content-type": "application/grpc",
      "x-request-id": `4bf92f3577b34da6a3ce929d0e0e${1000 + i}`,
      "user-agent": "grpc-node/1.14 (edgeslice test)",
    }));
    for (const headers of sent) session.request(headers).on("error", () => undefined);
    await eventually(() => blocks.length >= sent.length, 5000, "every request's header block");
    session.destroy();
    server.close();
    const decoder = new HpackDecoder();
    const decoded = blocks.map((block) => Object.fromEntries(pairs(decoder.decode(block))));
    expect(decoded).toHaveLength(sent.length);
    for (const [i, fields] of decoded.entries()) expect(fields).toMatchObject(sent[i] as object);
  });
});

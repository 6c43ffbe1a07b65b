import { describe, expect, it } from "vitest";
import {
  type ClientHelloRead,
  MAX_CLIENT_HELLO_BYTES,
  readClientHello,
} from "../../../functions/core/tls/client-hello.js";
import {
  clientHelloBytes,
  clientHelloMessage,
  extension,
  serverNameData,
} from "../../support/client-hello.js";

const hello = (serverName: string | undefined): ClientHelloRead => ({ kind: "hello", serverName });

describe("reading the server name of a ClientHello", () => {
  it.each<[string, Buffer, ClientHelloRead]>([
    [
      "a hello with server_name",
      clientHelloBytes({ serverNames: ["abc.example.com"] }),
      hello("abc.example.com"),
    ],
    [
      "the name lower-cased",
      clientHelloBytes({ serverNames: ["ABC.Example.COM"] }),
      hello("abc.example.com"),
    ],
    ["an absolute name without its dot", clientHelloBytes({ serverNames: ["a.test."] }), hello("a.test")],
    ["no server_name extension", clientHelloBytes(), hello(undefined)],
    ["no extensions block (TLS 1.2 and older)", clientHelloBytes({ noExtensions: true }), hello(undefined)],
    [
      "a hello split across records of 7 bytes (RFC 8446 §5.1)",
      clientHelloBytes({ serverNames: ["split.example.com"], recordSize: 7 }),
      hello("split.example.com"),
    ],
    [
      "a large hello (8 KiB of padding) in two records",
      clientHelloBytes({ serverNames: ["big.test"], padding: 8_000, recordSize: 5_000 }),
      hello("big.test"),
    ],
    [
      "a name type other than host_name, ignored",
      clientHelloBytes({ serverNameData: Uint8Array.from([0, 4, 9, 0, 1, 0x61]) }),
      hello(undefined),
    ],
    [
      "bytes after the hello (early data) left alone",
      Buffer.concat([clientHelloBytes({ serverNames: ["a.test"] }), Buffer.from([23, 3, 3, 0, 1, 0])]),
      hello("a.test"),
    ],
  ])("%s", (_case, bytes, expected) => {
    expect(readClientHello(bytes)).toEqual(expected);
  });

  it("asks for more at every cut of a hello, and reads the name once it is whole", () => {
    const bytes = clientHelloBytes({ serverNames: ["cut.example.com"], recordSize: 40 });
    for (let length = 0; length < bytes.length; length++) {
      expect(readClientHello(bytes.subarray(0, length))).toEqual({ kind: "incomplete" });
    }
    expect(readClientHello(bytes)).toEqual(hello("cut.example.com"));
  });

  it.each<[string, Buffer, RegExp]>([
    ["plain HTTP", Buffer.from("GET / HTTP/1.1\r\n"), /not a TLS handshake/],
    ["an alert record", Buffer.from([21, 3, 3, 0, 2, 2, 40]), /not a TLS handshake/],
    ["a record version 2.x", Buffer.from([22, 2, 0, 0, 4]), /not a TLS record version/],
    ["an empty handshake record", Buffer.from([22, 3, 1, 0, 0]), /record of 0 bytes/],
    ["a record over 2^14 bytes", Buffer.from([22, 3, 1, 0x40, 0x01]), /record of 16385 bytes/],
    ["a ServerHello", Buffer.from([22, 3, 3, 0, 4, 2, 0, 0, 0]), /not a ClientHello/],
    [
      "a hello whose length is over the bound",
      Buffer.from([22, 3, 1, 0, 4, 1, 0, 0x40, 0x01]),
      new RegExp(`ClientHello of ${MAX_CLIENT_HELLO_BYTES + 1} bytes`),
    ],
    [
      "a hello cut by another record type",
      Buffer.concat([
        clientHelloBytes({ serverNames: ["a.test"], recordSize: 10 }).subarray(0, 15),
        Buffer.from([23, 3, 3, 0, 1, 0]),
      ]),
      /interrupted by another record type/,
    ],
    ["a body shorter than its fixed fields", framed([3, 3, 1, 2, 3]), /truncated ClientHello$/],
    [
      "an extensions length past the end",
      framed([...fixedFields(), 0x01, 0x00, 0, 0]),
      /truncated ClientHello extensions/,
    ],
    [
      "an extension length past the end",
      framed([...fixedFields(), 0, 6, 0, 0, 0, 40, 1, 2]),
      /truncated ClientHello extension$/,
    ],
    [
      "two server_name extensions",
      framed([
        ...fixedFields(),
        ...withLength([
          ...extension(0, serverNameData(["a.test"])),
          ...extension(0, serverNameData(["b.test"])),
        ]),
      ]),
      /two server_name extensions/,
    ],
    ["two host names", clientHelloBytes({ serverNames: ["a.test", "b.test"] }), /two host names/],
    [
      "a server_name list longer than its extension",
      clientHelloBytes({ serverNameData: Uint8Array.from([0, 9, 0, 0, 1, 0x61]) }),
      /malformed server_name extension/,
    ],
    [
      "a host name longer than its entry",
      clientHelloBytes({ serverNameData: Uint8Array.from([0, 4, 0, 0, 9, 0x61]) }),
      /malformed server_name entry/,
    ],
    ["a name with a space", clientHelloBytes({ serverNames: ["a b.test"] }), /no DNS host name/],
    ["a name with a NUL", clientHelloBytes({ serverNames: ["a\u0000.test"] }), /no DNS host name/],
    ["an empty name", clientHelloBytes({ serverNames: [""] }), /no DNS host name/],
    [
      "a name of 300 characters",
      clientHelloBytes({ serverNames: [`${"a.".repeat(150)}`] }),
      /longer than a DNS name/,
    ],
  ])("refuses %s", (_case, bytes, reason) => {
    const read = readClientHello(bytes);
    expect(read.kind).toBe("invalid");
    expect(read.kind === "invalid" && read.reason).toMatch(reason);
  });

  it("decides every prefix of a valid hello without throwing, and no byte flip makes it throw", () => {
    const bytes = clientHelloBytes({ serverNames: ["flip.example.com"], recordSize: 33 });
    for (let at = 0; at < bytes.length; at++) {
      for (const value of [0, 0xff, (bytes[at] as number) ^ 1]) {
        const flipped = Buffer.from(bytes);
        flipped[at] = value;
        expect(["incomplete", "hello", "invalid"]).toContain(readClientHello(flipped).kind);
      }
    }
  });
});

/** legacy_version, random, empty session id, one cipher suite, null compression. */
function fixedFields(): number[] {
  return [3, 3, ...new Array(32).fill(1), 0, 0, 2, 0x13, 0x01, 1, 0];
}

function withLength(bytes: number[]): number[] {
  return [(bytes.length >> 8) & 0xff, bytes.length & 0xff, ...bytes];
}

/** A ClientHello message of this body in one record. */
function framed(body: number[]): Buffer {
  const message = [1, (body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff, ...body];
  return Buffer.from([22, 3, 1, (message.length >> 8) & 0xff, message.length & 0xff, ...message]);
}

// The builder's own message is what framed() wraps: one check that the two agree.
it("frames a built hello message as the builder does", () => {
  expect(framed(clientHelloMessage({ serverNames: ["x.test"] }).slice(4))).toEqual(
    clientHelloBytes({ serverNames: ["x.test"] }),
  );
});

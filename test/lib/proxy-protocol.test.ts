import { describe, expect, it } from "vitest";
import { MAX_PROXY_HEADER_LENGTH, MAX_V2_PAYLOAD, parseProxyHeader } from "../../lib/proxy-protocol.js";
import { proxyV1, proxyV2 } from "./proxy-protocol-bytes.js";

const ascii = (text: string) => new TextEncoder().encode(text);
const joined = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

describe("a PROXY protocol v1 header", () => {
  it.each([
    [
      "TCP4",
      "PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\n",
      { ip: "203.0.113.7", port: 51000 },
      { ip: "192.0.2.1", port: 443 },
    ],
    [
      "TCP6, printed canonically",
      "PROXY TCP6 2001:DB8:0:0::7 2001:db8::1 65535 0\r\n",
      { ip: "2001:db8::7", port: 65535 },
      { ip: "2001:db8::1", port: 0 },
    ],
    ["UNKNOWN: the connection's peer stands", "PROXY UNKNOWN\r\n", undefined, undefined],
    [
      "UNKNOWN with addresses after it (ignored)",
      "PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n",
      undefined,
      undefined,
    ],
  ])("reads %s and says where the request after it starts", (_what, header, source, destination) => {
    const parsed = parseProxyHeader(ascii(`${header}GET / HTTP/1.1\r\n`));
    expect(parsed).toEqual({ kind: "header", version: 1, length: header.length, source, destination });
  });

  it.each([
    ["the first byte", "P"],
    ["the signature cut short", "PROXY"],
    ["a line without its end", "PROXY TCP4 203.0.113.7 192.0.2.1 5"],
    ["a line up to its CR", "PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r"],
  ])("needs more bytes after %s", (_what, text) => {
    expect(parseProxyHeader(ascii(text))).toEqual({ kind: "incomplete" });
  });

  it.each([
    ["no CRLF within 107 bytes", `PROXY TCP4 ${"1".repeat(120)}`, /within 107 bytes/],
    ["a bare LF", "PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\n", /bare LF/],
    ["an unknown protocol", "PROXY UDP4 203.0.113.7 192.0.2.1 1 2\r\n", /"UDP4" is not/],
    ["a missing port", "PROXY TCP4 203.0.113.7 192.0.2.1 51000\r\n", /protocol source destination/],
    ["an extra field", "PROXY TCP4 203.0.113.7 192.0.2.1 1 2 3\r\n", /protocol source destination/],
    ["two spaces", "PROXY TCP4  203.0.113.7 192.0.2.1 1 2\r\n", /protocol source destination/],
    ["an IPv6 source on TCP4", "PROXY TCP4 2001:db8::7 192.0.2.1 1 2\r\n", /source: .* not an IPv4/],
    [
      "an IPv4 destination on TCP6",
      "PROXY TCP6 2001:db8::7 192.0.2.1 1 2\r\n",
      /destination: .* not an IPv6/,
    ],
    ["a name for an address", "PROXY TCP4 lb.example 192.0.2.1 1 2\r\n", /not an IPv4/],
    ["a port over 65535", "PROXY TCP4 203.0.113.7 192.0.2.1 65536 2\r\n", /not a port/],
    ["a port with a leading zero", "PROXY TCP4 203.0.113.7 192.0.2.1 080 2\r\n", /not a port/],
    ["a signed port", "PROXY TCP4 203.0.113.7 192.0.2.1 +80 2\r\n", /not a port/],
    ["a control character", "PROXY TCP4 203.0.113.7\t192.0.2.1 1 2\r\n", /printable/],
  ])("refuses %s", (_what, text, reason) => {
    const parsed = parseProxyHeader(ascii(text));
    expect(parsed.kind).toBe("invalid");
    if (parsed.kind === "invalid") expect(parsed.reason).toMatch(reason);
  });
});

describe("a PROXY protocol v2 header", () => {
  it("reads an IPv4 PROXY command and says where the connection's bytes start", () => {
    const header = proxyV2({ source: ["203.0.113.7", 51000], destination: ["192.0.2.1", 443] });
    expect(parseProxyHeader(joined(header, ascii("GET / HTTP/1.1\r\n")))).toEqual({
      kind: "header",
      version: 2,
      length: 28,
      source: { ip: "203.0.113.7", port: 51000 },
      destination: { ip: "192.0.2.1", port: 443 },
    });
  });

  it("reads an IPv6 PROXY command", () => {
    const header = proxyV2({ source: ["2001:db8::7", 1], destination: ["2001:db8::1", 8443] });
    expect(parseProxyHeader(header)).toMatchObject({
      length: 52,
      source: { ip: "2001:db8::7", port: 1 },
      destination: { ip: "2001:db8::1", port: 8443 },
    });
  });

  it("skips TLVs after the addresses (they count in the length)", () => {
    const tlv = Uint8Array.from([0xea, 0x00, 0x03, 0x01, 0x02, 0x03]);
    const header = proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], tlvs: tlv });
    expect(parseProxyHeader(header)).toMatchObject({ length: 34, source: { ip: "203.0.113.7" } });
  });

  it.each([
    ["LOCAL (a balancer's health check)", { command: 0 }],
    ["UNSPEC", { family: 0x00 }],
    ["a UNIX socket", { family: 0x31, payload: new Uint8Array(216) }],
  ])("keeps the connection's own peer for %s", (_what, shape) => {
    const parsed = parseProxyHeader(
      proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], ...shape }),
    );
    expect(parsed).toMatchObject({ kind: "header", version: 2, source: undefined, destination: undefined });
  });

  it.each([
    ["part of the signature", 5],
    ["the signature and part of the fixed part", 14],
    ["the fixed part without its addresses", 16],
    ["all but the last byte of the addresses", 27],
  ])("needs more bytes after %s", (_what, cut) => {
    const header = proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2] });
    expect(parseProxyHeader(header.subarray(0, cut))).toEqual({ kind: "incomplete" });
  });

  it.each([
    ["version 1 after the v2 signature", { version: 1 }, /version 1/],
    ["command 2", { command: 2 }, /command 2/],
    ["a datagram transport", { family: 0x12 }, /stream/],
    ["an unknown address family", { family: 0x41 }, /address family 4/],
    ["addresses too short for IPv4", { family: 0x11, payload: new Uint8Array(8) }, /cannot hold/],
    ["addresses too short for IPv6", { family: 0x21, payload: new Uint8Array(12) }, /cannot hold/],
    ["a length over the bound", { payload: new Uint8Array(MAX_V2_PAYLOAD + 1) }, /at most 4080/],
  ])("refuses %s", (_what, shape, reason) => {
    const parsed = parseProxyHeader(
      proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], ...shape }),
    );
    expect(parsed.kind).toBe("invalid");
    if (parsed.kind === "invalid") expect(parsed.reason).toMatch(reason);
  });

  it("refuses a declared length over the bound from the fixed part alone, before buffering it", () => {
    const header = proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2] });
    const fixed = header.slice(0, 16);
    fixed[14] = 0xff;
    fixed[15] = 0xff;
    expect(parseProxyHeader(fixed).kind).toBe("invalid");
    expect(MAX_PROXY_HEADER_LENGTH).toBe(16 + MAX_V2_PAYLOAD);
  });
});

describe("a connection without a PROXY header", () => {
  it.each([
    ["an HTTP/1.1 request", ascii("GET / HTTP/1.1\r\n")],
    ["a request whose method starts like PROXY", ascii("PROPFIND / HTTP/1.1\r\n")],
    ["the HTTP/2 preface", ascii("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")],
    ["a TLS ClientHello record", Uint8Array.from([0x16, 0x03, 0x01, 0x02, 0x00])],
    ["CRLF then something else than the v2 signature", ascii("\r\n\r\nGET")],
  ])("is %s", (_what, bytes) => {
    expect(parseProxyHeader(bytes)).toEqual({ kind: "none" });
  });

  it("is undecided on no bytes at all", () => {
    expect(parseProxyHeader(new Uint8Array(0))).toEqual({ kind: "incomplete" });
  });

  it("round-trips the v1 builder used by the socket tests", () => {
    expect(parseProxyHeader(proxyV1("TCP4", ["198.51.100.9", 4000], ["127.0.0.1", 80]))).toMatchObject({
      source: { ip: "198.51.100.9", port: 4000 },
    });
  });
});

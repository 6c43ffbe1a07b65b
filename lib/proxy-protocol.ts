import { formatIp, ipBytes } from "./ip.js";

/**
 * The PROXY protocol header a network load balancer puts before a connection's first byte to say whom it
 * relays (HAProxy's PROXY protocol, versions 1 and 2). Pure: it reads bytes a caller collected and says
 * whether they begin a header, need more, are malformed, or hold a complete header of `length` bytes.
 *
 * Neither HTTP/1.1, HTTP/2's preface nor a TLS record can begin with either signature, so a listener can
 * tell a relayed connection from a direct one by its first bytes alone.
 */

/** One end of the relayed connection, as the balancer saw it. */
export interface ProxiedAddress {
  /** Canonical text (lib/ip.ts). */
  readonly ip: string;
  readonly port: number;
}

export type ProxyHeaderParse =
  /** The bytes do not begin a PROXY header: the connection speaks its protocol straight away. */
  | { readonly kind: "none" }
  /** A header has begun and more bytes are needed to read it. */
  | { readonly kind: "incomplete" }
  | { readonly kind: "invalid"; readonly reason: string }
  | ProxyHeader;

export interface ProxyHeader {
  readonly kind: "header";
  readonly version: 1 | 2;
  /** Bytes the header takes; the connection's own bytes start there. */
  readonly length: number;
  /**
   * The client the balancer relays. Undefined when the header names none (v1 UNKNOWN; v2 LOCAL, such as the
   * balancer's own health checks, or an address family other than IPv4 and IPv6): the connection's own
   * peer stands, as the specification asks.
   */
  readonly source: ProxiedAddress | undefined;
  readonly destination: ProxiedAddress | undefined;
}

/** v1: "PROXY " ... CRLF in at most 107 bytes (the specification's bound for the longest TCP6 line). */
export const MAX_V1_LENGTH = 107;
/**
 * v2: the 16-byte fixed part and up to this many bytes of addresses and TLVs. The format allows 65,535;
 * balancers send a few hundred at most (addresses plus a TLV or two), and the bound caps what one
 * connection may make the router buffer before it is known to be well-formed.
 */
export const MAX_V2_PAYLOAD = 4080;
/** The most bytes a header read may hold: any more and the header is refused. */
export const MAX_PROXY_HEADER_LENGTH = 16 + MAX_V2_PAYLOAD;

const V1_PREFIX = [0x50, 0x52, 0x4f, 0x58, 0x59, 0x20]; // "PROXY "
const V2_SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];

/** Parses the first bytes of a connection (all of them read so far). */
export function parseProxyHeader(bytes: Uint8Array): ProxyHeaderParse {
  const v1 = prefixState(bytes, V1_PREFIX);
  if (v1 === "match") return parseV1(bytes);
  const v2 = prefixState(bytes, V2_SIGNATURE);
  if (v2 === "match") return parseV2(bytes);
  return v1 === "partial" || v2 === "partial" ? { kind: "incomplete" } : { kind: "none" };
}

function prefixState(bytes: Uint8Array, prefix: readonly number[]): "match" | "partial" | "differs" {
  const n = Math.min(bytes.length, prefix.length);
  for (let i = 0; i < n; i++) if (bytes[i] !== prefix[i]) return "differs";
  return bytes.length >= prefix.length ? "match" : "partial";
}

const PORT = /^(0|[1-9][0-9]{0,4})$/;

function parseV1(bytes: Uint8Array): ProxyHeaderParse {
  const end = Math.min(bytes.length, MAX_V1_LENGTH);
  let lf = -1;
  for (let i = V1_PREFIX.length; i < end; i++) {
    if (bytes[i] === 0x0a) {
      lf = i;
      break;
    }
  }
  if (lf < 0) {
    return bytes.length >= MAX_V1_LENGTH
      ? invalid(`a v1 header ends with CRLF within ${MAX_V1_LENGTH} bytes`)
      : { kind: "incomplete" };
  }
  if (bytes[lf - 1] !== 0x0d) return invalid("a v1 header ends with CRLF, not a bare LF");
  let line = "";
  for (let i = V1_PREFIX.length; i < lf - 1; i++) {
    const c = bytes[i] ?? 0;
    if (c < 0x20 || c > 0x7e) return invalid("a v1 header is printable US-ASCII");
    line += String.fromCharCode(c);
  }
  const length = lf + 1;
  const fields = line.split(" ");
  // UNKNOWN: the balancer could not tell; whatever follows on the line is ignored (the specification's rule).
  if (fields[0] === "UNKNOWN")
    return { kind: "header", version: 1, length, source: undefined, destination: undefined };
  if (fields[0] !== "TCP4" && fields[0] !== "TCP6")
    return invalid(`"${fields[0]}" is not TCP4, TCP6 or UNKNOWN`);
  if (fields.length !== 5) return invalid("a v1 TCP line is: protocol source destination sport dport");
  const size = fields[0] === "TCP4" ? 4 : 16;
  const source = v1Address(fields[1] ?? "", fields[3] ?? "", size);
  const destination = v1Address(fields[2] ?? "", fields[4] ?? "", size);
  if (typeof source === "string") return invalid(`source: ${source}`);
  if (typeof destination === "string") return invalid(`destination: ${destination}`);
  return { kind: "header", version: 1, length, source, destination };
}

function v1Address(ipText: string, portText: string, size: 4 | 16): ProxiedAddress | string {
  const bytes = ipBytes(ipText);
  if (bytes === undefined || bytes.length !== size) {
    return `"${ipText}" is not an ${size === 4 ? "IPv4" : "IPv6"} address`;
  }
  const port = Number(portText);
  if (!PORT.test(portText) || port > 65535) return `"${portText}" is not a port (0-65535)`;
  return { ip: formatIp(bytes), port };
}

const INET = 0x1;
const INET6 = 0x2;
const STREAM = 0x1;

function parseV2(bytes: Uint8Array): ProxyHeaderParse {
  if (bytes.length < 16) return { kind: "incomplete" };
  const versionCommand = bytes[12] ?? 0;
  if (versionCommand >> 4 !== 2) return invalid(`version ${versionCommand >> 4} after the v2 signature`);
  const command = versionCommand & 0x0f;
  if (command > 1) return invalid(`command ${command} is neither LOCAL (0) nor PROXY (1)`);
  const familyTransport = bytes[13] ?? 0;
  const payload = ((bytes[14] ?? 0) << 8) | (bytes[15] ?? 0);
  if (payload > MAX_V2_PAYLOAD)
    return invalid(`${payload} bytes of addresses and TLVs (at most ${MAX_V2_PAYLOAD})`);
  const length = 16 + payload;
  if (bytes.length < length) return { kind: "incomplete" };
  // LOCAL: the balancer speaks for itself (a health check); the connection's own addresses stand.
  if (command === 0) return { kind: "header", version: 2, length, source: undefined, destination: undefined };
  const family = familyTransport >> 4;
  if (family !== INET && family !== INET6) {
    // UNSPEC or UNIX: nothing an IP client address can be taken from; the specification keeps the connection's.
    if (family > 3) return invalid(`address family ${family}`);
    return { kind: "header", version: 2, length, source: undefined, destination: undefined };
  }
  if ((familyTransport & 0x0f) !== STREAM) return invalid("a relayed HTTP connection is a stream (TCP)");
  const size = family === INET ? 4 : 16;
  if (payload < 2 * size + 4)
    return invalid(`${payload} bytes cannot hold two ${size}-byte addresses and ports`);
  const at = 16;
  const port = (offset: number) => ((bytes[offset] ?? 0) << 8) | (bytes[offset + 1] ?? 0);
  return {
    kind: "header",
    version: 2,
    length,
    source: { ip: formatIp(bytes.subarray(at, at + size)), port: port(at + 2 * size) },
    destination: { ip: formatIp(bytes.subarray(at + size, at + 2 * size)), port: port(at + 2 * size + 2) },
  };
}

function invalid(reason: string): ProxyHeaderParse {
  return { kind: "invalid", reason };
}

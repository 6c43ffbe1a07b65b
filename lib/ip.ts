import { byCodeUnits } from "./code-unit-order.js";
/**
 * IP address parsing and canonical printing, without node:net so the code runs on any runtime.
 * Canonical forms make dedup (docs/design.md, translation rule 5) independent of how a controller spelled an address.
 */
export type IpFamily = "ipv4" | "ipv6";

export interface CanonicalIp {
  readonly family: IpFamily;
  readonly ip: string;
}

/** Parses an IPv4 or IPv6 literal and returns its canonical text, or undefined when it is not one. */
export function canonicalIp(text: string): CanonicalIp | undefined {
  const bytes = ipBytes(text);
  if (bytes === undefined) return undefined;
  if (bytes.length === 4) return { family: "ipv4", ip: formatIpv4(bytes) };
  return { family: "ipv6", ip: formatIpv6(bytes) };
}

/**
 * The address as 4 (IPv4) or 16 (IPv6) bytes, or undefined when `text` is not a plain literal.
 * Rejected on purpose: leading zeros in IPv4 parts (octal in some parsers, decimal in others, so ambiguous;
 * Kubernetes rejects them too since 1.22), shortened IPv4 forms, CIDR ranges and IPv6 zone ids (`%eth0`
 * is meaningless outside the host that wrote it).
 */
export function ipBytes(text: string): Uint8Array | undefined {
  if (text.includes(":")) return parseIpv6(text);
  return parseIpv4(text);
}

/**
 * Special-purpose ranges a unicast destination never is, plus loopback (the caller decides about that one):
 * RFC 6890 / RFC 4291 §2.4. An IPv6 address that embeds an IPv4 address (embeddedIpv4) is judged by the IPv4
 * address it embeds, since a connection to it reaches that address, directly or through a translator.
 */
export type IpScope = "unspecified" | "loopback" | "link-local" | "multicast" | "broadcast";

/**
 * How an IPv6 address embeds an IPv4 address: IPv4-mapped `::ffff:0:0/96` (RFC 4291 §2.5.5.2, the same host),
 * IPv4-compatible `::/96` other than `::` and `::1` (§2.5.5.1, deprecated), the NAT64 well-known prefix
 * `64:ff9b::/96` (RFC 6052 §2.1) and local-use `64:ff9b:1::/48` (RFC 8215, its last 32 bits) and 6to4 `2002::/16`, the address in bits 16-47 (RFC 3056 §2): the last three
 * reach the IPv4 address through a translator or relay, wherever that one sits.
 */
export type Ipv4Embedding = "mapped" | "compatible" | "nat64" | "6to4";

/** The IPv4 address a 16-byte address embeds, and how; undefined for any other address. */
export function embeddedIpv4(
  bytes: Uint8Array,
): { readonly form: Ipv4Embedding; readonly ipv4: Uint8Array } | undefined {
  if (bytes.length !== 16) return undefined;
  if (isIpv4Mapped(bytes)) return { form: "mapped", ipv4: bytes.subarray(12) };
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  if (zeros(0, 12) && !zeros(12, 15)) return { form: "compatible", ipv4: bytes.subarray(12) };
  if (zeros(0, 12) && (bytes[15] ?? 0) > 1) return { form: "compatible", ipv4: bytes.subarray(12) };
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  // The well-known prefix, and the local-use `64:ff9b:1::/48` (RFC 8215) read as its /96 format, conservatively.
  if (nat64 && (zeros(4, 12) || (bytes[4] === 0 && bytes[5] === 1))) {
    return { form: "nat64", ipv4: bytes.subarray(12) };
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { form: "6to4", ipv4: bytes.subarray(2, 6) };
  return undefined;
}

/** The special-purpose range `bytes` (4 or 16, from ipBytes) falls in; undefined for an ordinary address. */
export function ipScope(bytes: Uint8Array): IpScope | undefined {
  const embedded = embeddedIpv4(bytes);
  if (embedded) return ipScope(embedded.ipv4);
  const first = bytes[0] ?? 0;
  const second = bytes[1] ?? 0;
  if (bytes.length === 4) {
    if (bytes.every((byte) => byte === 0)) return "unspecified";
    if (bytes.every((byte) => byte === 255)) return "broadcast";
    if (first === 127) return "loopback";
    if (first === 169 && second === 254) return "link-local";
    if (first >= 224 && first <= 239) return "multicast";
    return undefined;
  }
  const zeroPrefix = bytes.subarray(0, 15).every((byte) => byte === 0);
  if (zeroPrefix && bytes[15] === 0) return "unspecified";
  if (zeroPrefix && bytes[15] === 1) return "loopback";
  if (first === 0xfe && (second & 0xc0) === 0x80) return "link-local";
  if (first === 0xff) return "multicast";
  return undefined;
}

function isIpv4Mapped(bytes: Uint8Array): boolean {
  for (let index = 0; index < 10; index += 1) if (bytes[index] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * A text key whose plain string order is the numeric address order (IPv4 before IPv6): fixed-width hex of
 * the bytes. Computed once per address so sorting does not parse on every comparison.
 */
export function ipSortKey(text: string): string | undefined {
  const bytes = ipBytes(text);
  return bytes === undefined ? undefined : sortKeyOf(bytes);
}

/** `canonicalIp` plus `ipSortKey` from a single parse, for hot loops. */
export function canonicalIpWithSortKey(
  text: string,
): (CanonicalIp & { readonly sortKey: string }) | undefined {
  const bytes = ipBytes(text);
  if (bytes === undefined) return undefined;
  const family = bytes.length === 4 ? "ipv4" : "ipv6";
  return { family, ip: family === "ipv4" ? formatIpv4(bytes) : formatIpv6(bytes), sortKey: sortKeyOf(bytes) };
}

function sortKeyOf(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${bytes.length === 4 ? "4" : "6"}${hex}`;
}

/** Orders canonical or raw literals numerically: IPv4 before IPv6, then by value. Unparsable text sorts last. */
export function compareIps(a: string, b: string): number {
  const left = ipBytes(a);
  const right = ipBytes(b);
  if (left === undefined || right === undefined) {
    if (left !== undefined) return -1;
    if (right !== undefined) return 1;
    return byCodeUnits(a, b);
  }
  if (left.length !== right.length) return left.length - right.length;
  for (let index = 0; index < left.length; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

const IPV4_PART = /^(0|[1-9][0-9]{0,2})$/;
const IPV6_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    if (!IPV4_PART.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[index] = value;
  }
  return bytes;
}

/** RFC 4291 §2.2 text forms: eight groups, one optional `::`, and an optional trailing dotted quad. */
function parseIpv6(text: string): Uint8Array | undefined {
  if (text.length > 45) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const compressed = halves.length === 2;
  const head = groupValues(halves[0] ?? "", !compressed);
  const tail = compressed ? groupValues(halves[1] ?? "", true) : [];
  if (head === undefined || tail === undefined) return undefined;
  // `::` stands for one or more zero groups, so at most seven may be written next to it.
  if (compressed ? head.length + tail.length > 7 : head.length !== 8) return undefined;
  const values = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  values.forEach((value, index) => {
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}

/**
 * The 16-bit values of one side of `::`. An empty side has none; an empty group (`1::2:`, `:1`) is invalid;
 * a dotted quad counts as two groups and may only end the whole address.
 */
function groupValues(side: string, mayEndWithQuad: boolean): number[] | undefined {
  if (side === "") return [];
  const groups = side.split(":");
  const values: number[] = [];
  for (const [index, group] of groups.entries()) {
    if (group.includes(".")) {
      if (!mayEndWithQuad || index !== groups.length - 1) return undefined;
      const quad = parseIpv4(group);
      if (quad === undefined) return undefined;
      values.push(((quad[0] ?? 0) << 8) | (quad[1] ?? 0), ((quad[2] ?? 0) << 8) | (quad[3] ?? 0));
    } else {
      if (!IPV6_GROUP.test(group)) return undefined;
      values.push(Number.parseInt(group, 16));
    }
  }
  return values;
}

/** The canonical text of 4 (IPv4) or 16 (IPv6) address bytes, as canonicalIp prints it. */
export function formatIp(bytes: Uint8Array): string {
  return bytes.length === 4 ? formatIpv4(bytes) : formatIpv6(bytes);
}

function formatIpv4(bytes: Uint8Array): string {
  return Array.from(bytes, String).join(".");
}

/**
 * RFC 5952 §4: lower case, no leading zeros, `::` for the longest run of two or more zero groups (the
 * first on a tie), a single zero group never shortened. §5: addresses known to embed IPv4 keep the dotted
 * quad: IPv4-mapped `::ffff:0:0/96` (RFC 4291 §2.5.5.2) and the NAT64 well-known prefix `64:ff9b::/96`
 * (RFC 6052 §2.4). Deprecated IPv4-compatible addresses are printed as hex so `::1` stays `::1`.
 */
function formatIpv6(bytes: Uint8Array): string {
  const groups = Array.from(
    { length: 8 },
    (_, index) => ((bytes[index * 2] ?? 0) << 8) | (bytes[index * 2 + 1] ?? 0),
  );
  const prefix = embeddingPrefix(groups);
  if (prefix !== undefined) return `${prefix}${formatIpv4(bytes.subarray(12))}`;
  return compressGroups(groups);
}

function embeddingPrefix(groups: readonly number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return "::ffff:";
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return "64:ff9b::";
  return undefined;
}

/** Prints `groups` with the longest zero run (length ≥ 2, first on a tie) as `::`. */
function compressGroups(groups: readonly number[]): string {
  const total = groups.length;
  let bestStart = -1;
  let bestLength = 0;
  let runStart = -1;
  for (let index = 0; index <= total; index += 1) {
    if (index < total && groups[index] === 0) {
      if (runStart < 0) runStart = index;
      continue;
    }
    if (runStart >= 0) {
      const length = index - runStart;
      if (length > bestLength) {
        bestStart = runStart;
        bestLength = length;
      }
      runStart = -1;
    }
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestLength < 2) return hex.join(":");
  const before = hex.slice(0, bestStart).join(":");
  const after = hex.slice(bestStart + bestLength).join(":");
  return `${before}::${after}`;
}

import { canonicalIp, ipBytes } from "./ip.js";
import type { Result } from "./result.js";

/** An IPv4 or IPv6 network in CIDR notation (RFC 4632, RFC 4291 §2.3). */
export interface IpNetwork {
  /** The network address: 4 or 16 bytes, every bit past `prefixLength` zero. */
  readonly bytes: Uint8Array;
  readonly prefixLength: number;
  /** Canonical text: `10.1.0.0/16`, `fd00:1::/64`. */
  readonly text: string;
}

const PREFIX_LENGTH = /^(0|[1-9][0-9]{0,2})$/;

/**
 * Parses `address/prefix-length`. Strict on purpose: a bare address, or one with bits set past the prefix
 * (`10.1.2.3/16`), is refused with the form that was probably meant, rather than guessed at.
 */
export function parseNetwork(text: string): Result<IpNetwork> {
  const slash = text.indexOf("/");
  if (slash < 0) return { ok: false, error: `"${text}" is not address/prefix-length (e.g. 10.1.0.0/16)` };
  const address = text.slice(0, slash);
  const length = text.slice(slash + 1);
  const bytes = ipBytes(address);
  if (bytes === undefined) return { ok: false, error: `"${address}" is not an IP address` };
  const bits = bytes.length * 8;
  const prefixLength = Number(length);
  if (!PREFIX_LENGTH.test(length) || prefixLength > bits) {
    return { ok: false, error: `"${text}": the prefix length must be 0-${bits}` };
  }
  const masked = withHostBitsCleared(bytes, prefixLength);
  if (!masked.every((byte, index) => byte === bytes[index])) {
    const meant = `${canonicalIp(formatBytes(masked))?.ip ?? ""}/${prefixLength}`;
    return { ok: false, error: `"${text}" has bits set past its prefix length: did you mean ${meant}?` };
  }
  return {
    ok: true,
    value: { bytes: masked, prefixLength, text: `${canonicalIp(address)?.ip}/${prefixLength}` },
  };
}

/**
 * Whether `address` (4 or 16 bytes, from ipBytes) lies in `network`. An IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`) is judged as the IPv4 address it embeds, since a connection to it reaches that address.
 */
export function networkContains(network: IpNetwork, address: Uint8Array): boolean {
  const bytes = address.length === 16 && isIpv4Mapped(address) ? address.subarray(12) : address;
  if (bytes.length !== network.bytes.length) return false;
  const whole = Math.floor(network.prefixLength / 8);
  for (let index = 0; index < whole; index += 1) if (bytes[index] !== network.bytes[index]) return false;
  const rest = network.prefixLength % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] ?? 0) & mask) === network.bytes[whole];
}

function withHostBitsCleared(bytes: Uint8Array, prefixLength: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let index = 0; index < bytes.length; index += 1) {
    const bitsHere = Math.min(8, Math.max(0, prefixLength - index * 8));
    out[index] = (bytes[index] ?? 0) & ((0xff << (8 - bitsHere)) & 0xff);
  }
  return out;
}

function formatBytes(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join(".");
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) {
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  }
  return groups.join(":");
}

function isIpv4Mapped(bytes: Uint8Array): boolean {
  for (let index = 0; index < 10; index += 1) if (bytes[index] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

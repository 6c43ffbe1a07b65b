import { ipBytes } from "../../lib/ip.js";

/** PROXY protocol headers as a balancer writes them, for the parser's tables and the raw-socket tests. */

export function proxyV1(protocol: "TCP4" | "TCP6", source: [string, number], destination: [string, number]) {
  return new TextEncoder().encode(
    `PROXY ${protocol} ${source[0]} ${destination[0]} ${source[1]} ${destination[1]}\r\n`,
  );
}

export interface ProxyV2Shape {
  readonly source: [string, number];
  readonly destination: [string, number];
  /** High nibble 2 unless a test says otherwise. */
  readonly version?: number;
  /** 1 PROXY, 0 LOCAL. */
  readonly command?: number;
  /** Address family and transport byte; default from the source address (0x11 TCP over IPv4, 0x21 over IPv6). */
  readonly family?: number;
  /** Replaces the address block (addresses and ports) as written. */
  readonly payload?: Uint8Array;
  readonly tlvs?: Uint8Array;
}

const SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];

export function proxyV2(shape: ProxyV2Shape): Uint8Array {
  const source = ipBytes(shape.source[0]);
  const destination = ipBytes(shape.destination[0]);
  if (!source || !destination) throw new Error("proxyV2: bad address");
  const addresses =
    shape.payload ??
    Uint8Array.from([
      ...source,
      ...destination,
      shape.source[1] >> 8,
      shape.source[1] & 0xff,
      shape.destination[1] >> 8,
      shape.destination[1] & 0xff,
    ]);
  const tlvs = shape.tlvs ?? new Uint8Array(0);
  const payload = addresses.length + tlvs.length;
  return Uint8Array.from([
    ...SIGNATURE,
    ((shape.version ?? 2) << 4) | (shape.command ?? 1),
    shape.family ?? (source.length === 4 ? 0x11 : 0x21),
    payload >> 8,
    payload & 0xff,
    ...addresses,
    ...tlvs,
  ]);
}

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate` fields, read and
 * written without I/O; random bytes come from the caller (crypto on Node and Workers).
 */

export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero: the caller's span. */
  readonly parentId: string;
  /** The trace-flags byte; bit 0 is `sampled`. */
  readonly flags: number;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS_32 = "0".repeat(32);
const ZEROS_16 = "0".repeat(16);

/**
 * A traceparent the router may continue (§3.2): version 00 exactly 55 characters; a later version (not ff) at
 * least 55, its first four fields read as version 00's and a dash after them when longer (§3.2.4, forward
 * compatibility). Anything else is undefined: the router then starts a new trace (§3.2.2.1 / §4.3).
 */
const VERSION_00 = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** parseTraceparent's verdict without its object: one regular expression for the common version 00. */
export function isValidTraceparent(value: string): boolean {
  if (value.length === 55 && value.charCodeAt(0) === 48 && value.charCodeAt(1) === 48) {
    return VERSION_00.test(value) && value.slice(3, 35) !== ZEROS_32 && value.slice(36, 52) !== ZEROS_16;
  }
  return parseTraceparent(value) !== undefined;
}

export function parseTraceparent(value: string): TraceParent | undefined {
  if (value.length < 55 || value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return undefined;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === "ff") return undefined;
  if (version === "00" ? value.length !== 55 : value.length > 55 && value[55] !== "-") return undefined;
  const traceId = value.slice(3, 35);
  const parentId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!HEX.test(traceId) || traceId === ZEROS_32) return undefined;
  if (!HEX.test(parentId) || parentId === ZEROS_16) return undefined;
  if (!HEX.test(flags)) return undefined;
  return { traceId, parentId, flags: Number.parseInt(flags, 16) };
}

/** The version 00 field the router sends. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

/** §3.3.1.5: at most 32 list-members; the router forwards at most 512 characters (§3.3.1.5 lets it drop the rest). */
const MAX_TRACESTATE_MEMBERS = 32;
export const MAX_TRACESTATE_LENGTH = 512;
const MEMBER =
  /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * Whether a tracestate (repeated fields joined with commas, §3.3.1) is one the router passes on: every non-empty
 * member well-formed, no key twice, at most 32 members and 512 characters. A bad one is dropped whole, never
 * repaired (§3.3.1.1).
 */
export function isValidTracestate(value: string): boolean {
  if (value.length > MAX_TRACESTATE_LENGTH) return false;
  const keys = new Set<string>();
  for (const raw of value.split(",")) {
    const member = raw.trim();
    if (member === "") continue;
    if (!MEMBER.test(member)) return false;
    const key = member.slice(0, member.indexOf("="));
    if (keys.has(key)) return false;
    keys.add(key);
  }
  return keys.size <= MAX_TRACESTATE_MEMBERS;
}

const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
/** Random bytes drawn at a time: one draw serves about 170 new traces. */
const POOL_BYTES = 4096;

/** Bytes as lowercase hex (for a runtime without Buffer: Workers' crypto.getRandomValues). */
export function hexOf(bytes: Uint8Array): string {
  const parts = new Array<string>(bytes.length);
  for (let i = 0; i < bytes.length; i++) parts[i] = BYTE_HEX[bytes[i] ?? 0] as string;
  return parts.join("");
}

/**
 * New trace and span ids, sliced from a pool of random hex that `randomHex` refills (one call per ~170
 * traces, not one per request). Ids are random (W3C level 2 asks trace ids to be), never all zero (a zero draw
 * is drawn again).
 */
export class TraceIds {
  readonly #randomHex: (bytes: number) => string;
  #pool = "";
  #at = POOL_BYTES * 2;

  constructor(randomHex: (bytes: number) => string) {
    this.#randomHex = randomHex;
  }

  traceId(): string {
    return this.#hex(32, ZEROS_32);
  }

  spanId(): string {
    return this.#hex(16, ZEROS_16);
  }

  /**
   * A traceparent for a request that came without a valid one and that the router does not trace itself:
   * sampled, so a backend sampling by its parent (OpenTelemetry's default, parentbased_always_on) decides as
   * it would for a request that had none, rather than being told not to record.
   */
  newTraceparent(): string {
    return `00-${this.traceId()}-${this.spanId()}-01`;
  }

  #hex(digits: number, zeros: string): string {
    for (;;) {
      if (this.#at + digits > this.#pool.length) {
        this.#pool = this.#randomHex(POOL_BYTES);
        this.#at = 0;
      }
      const text = this.#pool.slice(this.#at, this.#at + digits);
      this.#at += digits;
      if (text !== zeros) return text;
    }
  }
}

import fc from "fast-check";
import { FrameType as F, Flag, Setting } from "../../../lib/http2/frames.js";
import { HpackDecoder, HpackEncoder } from "../../../lib/http2/hpack.js";
import { frame, hpackInteger, indexed, indexedLiteral, literal } from "../../functions/node/http2/frames.js";
import { GET, POST } from "./server-kit.js";

/**
 * Random but structured client input for server-session-fuzz.test.ts: frames as small specs (what fast-check
 * prints as a counterexample), their bytes, and a checker of what the server sends back.
 */

/** Heads for the repo's HpackEncoder: VALID_HEADS requests, malformed ones, trailers, BIG (over 16 KiB). */
const VALID_HEADS = 5;
const BIG = 12;
const HEADS: readonly (readonly string[])[] = [
  GET,
  POST,
  [...POST, "content-length", "5"],
  [...GET, "te", "trailers", "accept", "*/*"],
  [":method", "OPTIONS", ":scheme", "https", ":path", "*"],
  [...POST, "content-length", "abc"],
  ["x-trailer", "1"],
  [...GET, "Accept", "*/*"],
  [...GET, "connection", "close"],
  [":method", "CONNECT", ":authority", "a.test:443"],
  [...GET.slice(0, 4), "accept", "*/*", ...GET.slice(4)],
  [],
  [...GET, "x-big", "a".repeat(17_000)],
];

/** Hand-made blocks: the first enters the dynamic table, the second refers to it; size updates. */
const RAW_BLOCKS: readonly Buffer[] = [
  Buffer.concat([indexedLiteral(":path", "/dyn"), literal(":method", "GET"), literal(":scheme", "http")]),
  Buffer.concat([indexed(2), indexed(6), indexed(62)]),
  Buffer.concat([hpackInteger(0, 5, 0x20), indexed(2), indexed(6), indexed(4)]),
  Buffer.concat([hpackInteger(8192, 5, 0x20), indexed(2)]),
  Buffer.concat([indexed(2), hpackInteger(100, 5, 0x20)]),
];

export type Block = { head: number } | { raw: number } | { bytes: Uint8Array };
/** PADDED: the Pad Length octet says `declared`, `actual` octets follow. */
export type Pad = { declared: number; actual: number } | null;
type Headers = { stream: number; block: Block; endStream: boolean; endHeaders: boolean };
export type FrameSpec =
  | { t: "settings"; ack: boolean; pairs: [number, number][]; extra: number }
  | { t: "ping"; ack: boolean; stream: number; len: number }
  | { t: "window"; stream: number; inc: number; len: number }
  | ({ t: "headers"; cut: number | null; pad: Pad; priority: boolean } & Headers)
  | ({ t: "continuation" } & Omit<Headers, "endStream">)
  | { t: "data"; stream: number; size: number; endStream: boolean; pad: Pad }
  | { t: "rst"; stream: number; code: number; len: number }
  | { t: "priority"; stream: number; len: number }
  | { t: "goaway"; stream: number; last: number; code: number; len: number }
  | { t: "push"; stream: number; promised: number }
  | { t: "unknown"; type: number; flags: number; stream: number; len: number };

const weighted = <T>(...pairs: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...pairs.filter(([weight]) => weight > 0).map(([weight, arbitrary]) => ({ weight, arbitrary })));
const is = <T extends FrameSpec["t"]>(t: T) => fc.constant(t);
const bool = fc.boolean();
const zero = fc.constant(0);
const MAX = 0x7fff_ffff;
/** The usual stream ids; a valid frame on one the client has not opened yet is moved (`normalized`). */
const CLIENT_STREAMS = [1, 3, 5, 7, 9];

/**
 * Frames at a chaos level `bad` (per mille): each field takes a value that breaks the protocol (a connection
 * error, mostly) with that weight against 1000 - bad for a valid one: a run gets some way before it fails.
 */
export function framesArb(bad: number): fc.Arbitrary<FrameSpec> {
  const either = <T>(ok: fc.Arbitrary<T>, no: fc.Arbitrary<T>) => weighted([1000 - bad, ok], [bad, no]);
  const len = (usual: number, max: number) => either(fc.constant(usual), fc.nat(max));
  const stream = either(fc.constantFrom(...CLIENT_STREAMS), fc.constantFrom(0, 2, 4, 11, 101, MAX));
  const head = (min: number, max: number) => fc.record({ head: fc.integer({ min, max }) });
  const [valid, malformed, big] = [head(0, VALID_HEADS - 1), head(VALID_HEADS, BIG - 1), head(BIG, BIG)];
  const raw = fc.record({ raw: fc.nat(RAW_BLOCKS.length - 1) });
  const bytes = fc.record({ bytes: fc.uint8Array({ maxLength: 40 }) });
  const block = either<Block>(
    weighted<Block>([6, valid], [2, malformed], [1, fc.constant({ raw: 0 })]),
    fc.oneof(big, raw, bytes),
  );
  const declared = weighted([4, fc.nat(8)], [1, fc.constant(255)]);
  const skew = either(zero, fc.integer({ min: -3, max: 3 }));
  const padding = fc
    .tuple(declared, skew)
    .map(([declared, skew]) => ({ declared, actual: Math.max(0, declared + skew) }));
  const pad: fc.Arbitrary<Pad> = fc.option(padding, { freq: 3, nil: null });
  const any = fc.oneof(fc.nat(70_000), fc.constantFrom(0, 1, MAX), fc.nat({ max: 0xffff_ffff }));
  const setting = either<[number, number]>(
    fc.oneof(
      fc.tuple(fc.constantFrom(Setting.HEADER_TABLE_SIZE, Setting.MAX_CONCURRENT_STREAMS, 6, 7, 0xffff), any),
      fc.tuple(fc.constant(Setting.ENABLE_PUSH), fc.nat(1)),
      fc.tuple(fc.constant(Setting.INITIAL_WINDOW_SIZE), fc.oneof(fc.nat(70_000), fc.constantFrom(0, MAX))),
      fc.tuple(fc.constant(Setting.MAX_FRAME_SIZE), fc.integer({ min: 16_384, max: 0xff_ffff })),
    ),
    fc.tuple(fc.nat(0xffff), any),
  );
  const size = either(
    weighted<number>([6, fc.nat(100)], [2, fc.nat(16_000)], [1, fc.constant(16_000)]),
    fc.constantFrom(16_383, 16_384, 16_385, 20_000),
  );
  const settings = fc
    .record({ t: is("settings"), ack: bool, pairs: fc.array(setting, { maxLength: 4 }), extra: len(0, 5) })
    .map((f) => (f.ack && f.extra === 0 && bad < 100 ? { ...f, pairs: [] } : f));
  const inc = either(fc.integer({ min: 1, max: 70_000 }), fc.constantFrom(0, MAX, 0xffff_ffff));
  const endHeaders = either(fc.constant(true), fc.constant(false));
  const cut = fc.option(fc.nat(), { freq: 3, nil: null });
  const priority = weighted([4, fc.constant(false)], [1, fc.constant(true)]);
  const endStream = weighted([3, fc.constant(false)], [1, fc.constant(true)]);
  const code = weighted<number>([4, fc.nat(14)], [1, fc.nat({ max: 0xffff_ffff })]);
  const last = { last: stream, code: fc.nat(14), len: len(8, 12) };
  const unknown = { type: fc.integer({ min: 10, max: 255 }), flags: fc.nat(255), stream, len: fc.nat(20) };
  return weighted<FrameSpec>(
    [200, settings],
    [200, fc.record({ t: is("ping"), ack: bool, stream: either(zero, fc.constant(1)), len: len(8, 12) })],
    [300, fc.record({ t: is("window"), stream: fc.oneof(zero, stream), inc, len: len(4, 6) })],
    [600, fc.record({ t: is("headers"), stream, block, endStream: bool, endHeaders, cut, pad, priority })],
    [Math.floor(bad / 5), fc.record({ t: is("continuation"), stream, block, endHeaders: bool })],
    [600, fc.record({ t: is("data"), stream, size, endStream, pad })],
    [200, fc.record({ t: is("rst"), stream, code, len: len(4, 6) })],
    [100, fc.record({ t: is("priority"), stream, len: len(5, 7) })],
    [15, fc.record({ t: is("goaway"), stream: either(zero, stream), ...last })],
    [Math.floor(bad / 10), fc.record({ t: is("push"), stream, promised: stream })],
    [100, fc.record({ t: is("unknown"), ...unknown })],
  );
}

/**
 * A client's frames on streams it opened: a DATA, RST_STREAM or WINDOW_UPDATE on one of CLIENT_STREAMS above
 * the highest HEADERS so far goes on that one instead (idle streams are a connection error, §5.1), or is
 * dropped before any. Frames on the other ids are left as they are: they are the chaos.
 */
export function normalized(frames: readonly FrameSpec[]): FrameSpec[] {
  let last = 0;
  const out: FrameSpec[] = [];
  for (const f of frames) {
    if (f.t === "headers" && f.stream % 2 === 1) last = Math.max(last, f.stream);
    const idle = (f.t === "data" || f.t === "rst" || f.t === "window") && CLIENT_STREAMS.includes(f.stream);
    if (!idle || f.stream <= last) out.push(f);
    else if (last > 0) out.push({ ...f, stream: last });
    else if (f.t === "window") out.push({ ...f, stream: 0 });
  }
  return out;
}

/** 1..40 frames at a chaos level picked per run: none, a little, some, a lot. */
export const clientFramesArb: fc.Arbitrary<FrameSpec[]> = fc
  .constantFrom(0, 5, 20, 100)
  .chain((bad) => fc.array(framesArb(bad), { minLength: 1, maxLength: 40, size: "max" }))
  .map(normalized);

const encoder = new HpackEncoder();
const GET_BLOCK = Buffer.from(encoder.encode(GET));

function blockBytes(block: Block): Buffer {
  if ("head" in block) return Buffer.from(encoder.encode(HEADS[block.head] ?? []));
  if ("raw" in block) return RAW_BLOCKS[block.raw] ?? Buffer.alloc(0);
  return Buffer.from(block.bytes);
}

/** Pad Length, `fields` (HEADERS' priority fields), then the content and `actual` octets of padding. */
function padded(content: Buffer, pad: Pad, fields: Buffer = Buffer.alloc(0)): Buffer {
  if (pad === null) return Buffer.concat([fields, content]);
  return Buffer.concat([Buffer.from([pad.declared]), fields, content, Buffer.alloc(pad.actual)]);
}

/** A 32-bit value in `len` octets (cut short, or zero-filled after). */
function word(value: number, len = 4): Buffer {
  const out = Buffer.alloc(Math.max(len, 4));
  out.writeUInt32BE(value >>> 0);
  return out.subarray(0, len);
}

/** HEADERS, and when `cut` falls inside its block, a CONTINUATION with the rest (END_HEADERS on it). */
function headersBytes(f: Extract<FrameSpec, { t: "headers" }>): Buffer {
  const block = blockBytes(f.block);
  const at = f.cut === null || !f.endHeaders ? block.length : f.cut % (block.length + 1);
  let flags = f.endStream ? Flag.END_STREAM : 0;
  if (f.endHeaders && at === block.length) flags |= Flag.END_HEADERS;
  if (f.pad !== null) flags |= Flag.PADDED;
  if (f.priority) flags |= Flag.PRIORITY;
  const fragment = padded(block.subarray(0, at), f.pad, f.priority ? word(3, 5) : Buffer.alloc(0));
  const first = frame(F.HEADERS, flags, f.stream, fragment);
  if (at === block.length) return first;
  return Buffer.concat([first, frame(F.CONTINUATION, Flag.END_HEADERS, f.stream, block.subarray(at))]);
}

export function frameBytes(f: FrameSpec): Buffer {
  switch (f.t) {
    case "settings": {
      const payload = Buffer.alloc(f.pairs.length * 6 + f.extra);
      f.pairs.forEach(([id, value], i) => {
        payload.writeUInt16BE(id, i * 6);
        payload.writeUInt32BE(value, i * 6 + 2);
      });
      return frame(F.SETTINGS, f.ack ? Flag.ACK : 0, 0, payload);
    }
    case "ping":
      return frame(F.PING, f.ack ? Flag.ACK : 0, f.stream, Buffer.alloc(f.len, 7));
    case "window":
      return frame(F.WINDOW_UPDATE, 0, f.stream, word(f.inc, f.len));
    case "headers":
      return headersBytes(f);
    case "continuation":
      return frame(F.CONTINUATION, f.endHeaders ? Flag.END_HEADERS : 0, f.stream, blockBytes(f.block));
    case "data": {
      const flags = (f.endStream ? Flag.END_STREAM : 0) | (f.pad === null ? 0 : Flag.PADDED);
      return frame(F.DATA, flags, f.stream, padded(Buffer.alloc(f.size, 0x61), f.pad));
    }
    case "rst":
      return frame(F.RST_STREAM, 0, f.stream, word(f.code, f.len));
    case "priority":
      return frame(F.PRIORITY, 0, f.stream, Buffer.alloc(f.len, 1));
    case "goaway":
      return frame(F.GOAWAY, 0, f.stream, Buffer.concat([word(f.last), word(f.code)]).subarray(0, f.len));
    case "push":
      return frame(F.PUSH_PROMISE, Flag.END_HEADERS, f.stream, Buffer.concat([word(f.promised), GET_BLOCK]));
    case "unknown":
      return frame(f.type, f.flags, f.stream, Buffer.alloc(f.len, 2));
  }
}

/** The largest SETTINGS_MAX_FRAME_SIZE the client announced (in range, in a well-formed SETTINGS frame). */
export function announcedMaxFrameSize(frames: readonly FrameSpec[]): number {
  const pairs = frames.flatMap((f) => (f.t === "settings" && !f.ack && f.extra === 0 ? f.pairs : []));
  const sizes = pairs.filter(([id, value]) => id === Setting.MAX_FRAME_SIZE && value <= 0xff_ffff);
  return Math.max(16_384, ...sizes.map(([, value]) => value));
}

/** What a server sends: each type's flags, its fixed length, whether it is on stream 0 (undefined: either). */
const RULES: Readonly<Record<number, { flags: number; length?: number; connection?: boolean }>> = {
  [F.DATA]: { flags: Flag.END_STREAM, connection: false },
  [F.HEADERS]: { flags: Flag.END_STREAM | Flag.END_HEADERS, connection: false },
  [F.RST_STREAM]: { flags: 0, length: 4, connection: false },
  [F.SETTINGS]: { flags: Flag.ACK, connection: true },
  [F.PING]: { flags: Flag.ACK, length: 8, connection: true },
  [F.GOAWAY]: { flags: 0, length: 8, connection: true },
  [F.WINDOW_UPDATE]: { flags: 0, length: 4 },
  [F.CONTINUATION]: { flags: Flag.END_HEADERS, connection: false },
};

/**
 * What is wrong with the frames the server sent: sizes (DATA at 16,384 octets, others at what the client
 * allowed), types, flags, lengths, stream ids, field blocks that decode (a head opening with :status, trailers
 * with no pseudo-header field), nothing on a stream after its RST_STREAM, nor DATA or HEADERS after its
 * END_STREAM. A last frame cut short is allowed (the socket may be destroyed in the middle of a write).
 */
export function serverFrameProblems(bytes: Buffer, maxFrameSize: number): string[] {
  const problems: string[] = [];
  const decoder = new HpackDecoder(4096, 1 << 20);
  const state = new Map<number, "head" | "ended" | "reset">();
  let open: { stream: number; parts: Buffer[]; endStream: boolean } | undefined;
  for (let n = 0, at = 0; bytes.length - at >= 9; n++) {
    const [length, type, flags] = [bytes.readUIntBE(at, 3), bytes[at + 3] as number, bytes[at + 4] as number];
    const stream = bytes.readUInt32BE(at + 5);
    const bad = (why: string) => problems.push(`frame ${n}, type ${type}/${flags} on ${stream}: ${why}`);
    if (length > (type === F.DATA ? 16_384 : maxFrameSize)) bad(`${length} octets`);
    if (at + 9 + length > bytes.length) break;
    const payload = bytes.subarray(at + 9, at + 9 + length);
    at += 9 + length;
    const rule = RULES[type];
    if (rule === undefined) bad("a type a server never sends");
    else if ((flags & ~rule.flags) !== 0) bad("unknown flags");
    if (rule?.length !== undefined && length !== rule.length) bad("a wrong length");
    if (rule?.connection !== undefined && rule.connection !== (stream === 0)) bad("on the wrong stream");
    if (stream > 0x7fff_ffff) bad("the reserved bit set");
    if (n === 0 && (type !== F.SETTINGS || flags !== 0)) bad("the server's preface is not SETTINGS");
    if (type === F.SETTINGS && (flags === Flag.ACK ? length !== 0 : length % 6 !== 0)) bad("a bad length");
    if (type === F.PING && flags !== Flag.ACK) bad("a PING that is not an ACK");
    if (type === F.WINDOW_UPDATE && length === 4 && payload.readUInt32BE(0) % 2 ** 31 === 0) bad("0");
    if (open && (type !== F.CONTINUATION || stream !== open.stream)) bad("inside a field block");
    if (open === undefined && type === F.CONTINUATION) bad("CONTINUATION without HEADERS");
    const was = state.get(stream);
    if (rule?.connection === false && stream % 2 !== 1) bad("not a client's stream");
    // §8.1: RST_STREAM(NO_ERROR) may follow a response that ended before the request did.
    if (stream !== 0 && was === "reset") bad("after the stream's RST_STREAM");
    if ((type === F.DATA || type === F.HEADERS) && was === "ended") bad("after the stream's END_STREAM");
    if (type === F.DATA && was !== "head") bad("DATA before a head");
    if (type === F.RST_STREAM) state.set(stream, "reset");
    if (type === F.DATA && (flags & Flag.END_STREAM) !== 0) state.set(stream, "ended");
    if (type === F.HEADERS) open = { stream, parts: [], endStream: (flags & Flag.END_STREAM) !== 0 };
    if (open === undefined || (type !== F.HEADERS && type !== F.CONTINUATION)) continue;
    open.parts.push(payload);
    if ((flags & Flag.END_HEADERS) === 0) continue;
    const head = state.get(open.stream) === undefined;
    try {
      const fields = decoder.decode(Buffer.concat(open.parts));
      if (head && fields[0] !== ":status") bad(`a head without :status first: ${fields.slice(0, 4)}`);
      const pseudo = fields.some((field, i) => i % 2 === 0 && field.startsWith(":"));
      if (!head && (!open.endStream || pseudo)) bad("trailers without END_STREAM or with a pseudo-header");
    } catch (error) {
      bad(`a field block that does not decode: ${error}`);
    }
    state.set(open.stream, open.endStream || !head ? "ended" : "head");
    open = undefined;
  }
  return problems;
}

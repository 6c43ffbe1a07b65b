import { describe, expect, it } from "vitest";
import {
  dataFrame,
  Flag,
  FrameReader,
  FrameType,
  goawayFrame,
  headersFrames,
  pingAckFrame,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
} from "../../../lib/http2/frames.js";

/** The frames the client writes and the reader that splits the peer's bytes into frames. */

function readFrameHeader(frame: Buffer, offset: number) {
  return {
    length: frame.readUIntBE(offset, 3),
    type: frame[offset + 3],
    flags: frame[offset + 4],
    streamId: frame.readUInt32BE(offset + 5) & 0x7fff_ffff,
  };
}

function readAll(chunks: Buffer[], maxFrameSize = 16_384) {
  const frames: { type: number; flags: number; streamId: number; payload: string }[] = [];
  let oversized: number | undefined;
  const reader = new FrameReader(
    maxFrameSize,
    (type, flags, streamId, payload) =>
      frames.push({ type, flags, streamId, payload: payload.toString("hex") }) > 0,
    (length) => {
      oversized = length;
    },
  );
  for (const chunk of chunks) reader.push(chunk);
  return { frames, oversized, reader };
}

describe("HTTP/2 frames", () => {
  it("writes the 9-octet header with a 24-bit length and clears the reserved bit", () => {
    const frame = windowUpdateFrame(0x7fff_ffff, 0x7fff_ffff);
    expect(readFrameHeader(frame, 0)).toEqual({
      length: 4,
      type: FrameType.WINDOW_UPDATE,
      flags: 0,
      streamId: 0x7fff_ffff,
    });
    expect(frame.readUInt32BE(9)).toBe(0x7fff_ffff);
    const big = dataFrame(3, Buffer.alloc(70_000), true);
    expect(readFrameHeader(big, 0)).toEqual({
      length: 70_000,
      type: FrameType.DATA,
      flags: Flag.END_STREAM,
      streamId: 3,
    });
  });

  it("builds SETTINGS, PING ACK, RST_STREAM and GOAWAY payloads", () => {
    expect(settingsFrame([2, 0, 4, 65_536]).subarray(9).toString("hex")).toBe(
      "000200000000" + "000400010000",
    );
    expect(pingAckFrame(Buffer.from("abcdefgh")).toString("latin1", 9)).toBe("abcdefgh");
    expect(pingAckFrame(Buffer.alloc(8))[4]).toBe(Flag.ACK);
    expect(rstStreamFrame(5, 8).subarray(5).toString("hex")).toBe("0000000500000008");
    expect(goawayFrame(1).subarray(9).toString("latin1")).toBe("\0\0\0\0\0\0\0\x01");
  });

  it("splits a field block into HEADERS and CONTINUATION frames at the peer's frame size", () => {
    const block = Buffer.alloc(40_000, 7);
    const out = headersFrames(1, block, true, 16_384);
    const { frames } = readAll([out]);
    expect(frames.map(({ type, flags, payload }) => [type, flags, payload.length / 2])).toEqual([
      [FrameType.HEADERS, Flag.END_STREAM, 16_384],
      [FrameType.CONTINUATION, 0, 16_384],
      [FrameType.CONTINUATION, Flag.END_HEADERS, 7232],
    ]);
    const single = readAll([headersFrames(3, Buffer.from([0x88]), false, 16_384)]).frames;
    expect(single).toEqual([
      { type: FrameType.HEADERS, flags: Flag.END_HEADERS, streamId: 3, payload: "88" },
    ]);
  });
});

describe("FrameReader", () => {
  const bytes = Buffer.concat([
    settingsFrame([4, 100]),
    dataFrame(1, Buffer.from("hello"), false),
    dataFrame(1, Buffer.alloc(0), true),
    dataFrame(3, Buffer.alloc(16_384, 1), true),
    windowUpdateFrame(0, 10),
  ]);
  const whole = readAll([bytes]).frames;

  it("reads the same frames however the bytes are split", () => {
    expect(whole).toHaveLength(5);
    for (const size of [1, 2, 5, 9, 10, 100, 16_393, 16_394]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      const read = readAll(chunks);
      expect(read.frames).toEqual(whole);
    }
  });

  it("keeps an incomplete frame until the rest comes", () => {
    const read = readAll([bytes.subarray(0, bytes.length - 3)]);
    expect(read.frames).toHaveLength(4);
    read.reader.push(bytes.subarray(bytes.length - 3));
    expect(read.frames).toEqual(whole);
  });

  it("stops at a frame longer than its maximum, whole or split", () => {
    const over = dataFrame(1, Buffer.alloc(16_385), false);
    expect(readAll([over]).oversized).toBe(16_385);
    const split = readAll([over.subarray(0, 4), over.subarray(4, 12)]);
    expect(split.oversized).toBe(16_385);
    expect(split.frames).toEqual([]);
  });
});

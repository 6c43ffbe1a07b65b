import { afterEach, describe, expect, it } from "vitest";
import { Http2SessionError } from "../../../lib/http2/api.js";
import { ErrorCode, Flag, FrameType, Setting } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { get, openSession, post, runCleanups, send } from "./h2-kit.js";
import { connected, goawaySeen, OK, type RawPeer, rawServer, requestsSeen } from "./raw-peer.js";

/** The client against a server of hand-built frames: the connection and stream errors a peer causes. */

afterEach(runCleanups);

describe("Http2ClientSession against a misbehaving peer", () => {
  it("ends a connection whose CONTINUATION frames never end, without holding more than the bound", async () => {
    const server = await rawServer();
    const { session, record } = openSession(server.port, { maxHeaderListSize: 16 * 1024 });
    const { record: stream } = send(session, get(server.port));
    await eventually(() => (server.peers[0]?.requests().length ?? 0) === 1, 2000, "the request");
    const peer = server.peers[0] as RawPeer;
    peer.send(FrameType.HEADERS, 0, 1, peer.block(OK));
    let sent = 0;
    while (!peer.closed && sent < 4 * 1024 * 1024) {
      peer.send(FrameType.CONTINUATION, 0, 1, Buffer.alloc(16_384, 0x40));
      sent += 16_384;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await stream.done;
    expect(sent).toBeLessThan(4 * 1024 * 1024);
    expect(stream.closed?.error?.message).toMatch(/field block larger/);
    expect((await goawaySeen(peer)).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    expect(record.closed?.error).toBeInstanceOf(Error);
  });

  it("ends a connection flooded with empty CONTINUATION frames as it ends one whose block is too large", async () => {
    const server = await rawServer();
    const { session } = openSession(server.port, { maxHeaderListSize: 1024 });
    const { record: stream } = send(session, get(server.port));
    await eventually(() => (server.peers[0]?.requests().length ?? 0) === 1, 2000, "the request");
    const peer = server.peers[0] as RawPeer;
    peer.send(FrameType.HEADERS, 0, 1, peer.block(OK));
    const empty = Buffer.from([0, 0, 0, FrameType.CONTINUATION, 0, 0, 0, 0, 1]);
    peer.socket.write(Buffer.concat(Array.from({ length: 10_000 }, () => empty)));
    expect((await goawaySeen(peer)).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    await stream.done;
    expect(stream.closed?.error?.message).toMatch(/field block larger/);
  });

  it("treats a frame interleaved in a field block as PROTOCOL_ERROR", async () => {
    const { session, peer, port, record } = await connected();
    send(session, get(port));
    await requestsSeen(peer, 1);
    peer.send(FrameType.HEADERS, 0, 1, peer.block(OK));
    peer.send(FrameType.PING, 0, 0, Buffer.alloc(8));
    expect((await goawaySeen(peer)).code).toBe(ErrorCode.PROTOCOL_ERROR);
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
  });

  it("joins HEADERS and CONTINUATION into one field block", async () => {
    const { session, peer, port } = await connected();
    const { record } = send(session, get(port));
    await requestsSeen(peer, 1);
    const block = peer.block([":status", "200", "x-long", "v".repeat(300)]);
    peer.send(FrameType.HEADERS, Flag.END_STREAM, 1, block.subarray(0, 100));
    peer.send(FrameType.CONTINUATION, 0, 1, block.subarray(100, 200));
    peer.send(FrameType.CONTINUATION, Flag.END_HEADERS, 1, block.subarray(200));
    await record.done;
    expect(record.fields).toEqual(["x-long", "v".repeat(300)]);
    expect(record.headEnded).toBe(true);
  });

  it.each([
    [
      "a frame over 16384 octets",
      ErrorCode.FRAME_SIZE_ERROR,
      (p: RawPeer) => p.send(FrameType.DATA, 0, 1, Buffer.alloc(16_385)),
    ],
    [
      "PUSH_PROMISE",
      ErrorCode.PROTOCOL_ERROR,
      (p: RawPeer) => p.send(FrameType.PUSH_PROMISE, Flag.END_HEADERS, 1, [0, 0, 0, 2]),
    ],
    [
      "a connection WINDOW_UPDATE of 0",
      ErrorCode.PROTOCOL_ERROR,
      (p: RawPeer) => p.send(FrameType.WINDOW_UPDATE, 0, 0, [0, 0, 0, 0]),
    ],
    [
      "a connection window past 2^31-1",
      ErrorCode.FLOW_CONTROL_ERROR,
      (p: RawPeer) => p.send(FrameType.WINDOW_UPDATE, 0, 0, [0x7f, 0xff, 0xff, 0xff]),
    ],
    [
      "an undecodable field block",
      ErrorCode.COMPRESSION_ERROR,
      (p: RawPeer) => p.send(FrameType.HEADERS, 4, 1, [0xff, 0xff, 0xff, 0xff, 0x7f]),
    ],
    ["HEADERS on an even stream", ErrorCode.PROTOCOL_ERROR, (p: RawPeer) => p.headers(2, OK, true)],
    ["DATA on a stream never opened", ErrorCode.PROTOCOL_ERROR, (p: RawPeer) => p.data(5, "x", true)],
    [
      "SETTINGS_ENABLE_PUSH 1",
      ErrorCode.PROTOCOL_ERROR,
      (p: RawPeer) => p.settings([Setting.ENABLE_PUSH, 1]),
    ],
    [
      "SETTINGS of a length not a multiple of 6",
      ErrorCode.FRAME_SIZE_ERROR,
      (p: RawPeer) => p.send(FrameType.SETTINGS, 0, 0, [0, 1, 0]),
    ],
    [
      "a PING of 7 octets",
      ErrorCode.FRAME_SIZE_ERROR,
      (p: RawPeer) => p.send(FrameType.PING, 0, 0, Buffer.alloc(7)),
    ],
    [
      "DATA padding longer than the frame",
      ErrorCode.PROTOCOL_ERROR,
      (p: RawPeer) => p.send(FrameType.DATA, Flag.PADDED, 1, [5, 1, 2]),
    ],
  ])("answers %s with GOAWAY and the matching code, closing the streams", async (_what, code, misbehave) => {
    const { session, peer, port, record } = await connected();
    const { record: stream } = send(session, get(port));
    await requestsSeen(peer, 1);
    misbehave(peer);
    const goaway = await goawaySeen(peer);
    expect(goaway).toEqual({ last: 0, code });
    await stream.done;
    expect(stream.closed?.code).toBe(code);
    expect(stream.closed?.error).toBeInstanceOf(Error);
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
    expect(session.destroyed).toBe(true);
    await eventually(() => peer.closed, 3000, "the socket closed");
  });

  it.each([
    ["no :status", [["x-a", "b"], false]],
    ["a 101 status", [[":status", "101"], false]],
    ["a two-digit status", [[":status", "20"], false]],
    ["a status past 599 (RFC 9110 §15)", [[":status", "600"], false]],
    ["a request pseudo-header field", [[":status", "200", ":path", "/"], false]],
    ["a connection-specific field", [[":status", "200", "connection", "close"], false]],
    ["an uppercase field name", [[":status", "200", "X-Upper", "b"], false]],
    ["a field value with CR LF", [[":status", "200", "x-a", "b\r\nx-injected: 1"], false]],
    ["a field value with a leading space", [[":status", "200", "x-a", " b"], false]],
    ["a content-length its DATA does not match", [[":status", "200", "content-length", "3"], "toolong"]],
  ] as const)(
    "resets a stream whose response has %s with PROTOCOL_ERROR, and the session goes on",
    async (_what, [fields, body]) => {
      const { session, peer, port } = await connected();
      const bad = send(session, get(port));
      await requestsSeen(peer, 1);
      peer.headers(1, [...fields], body === false);
      if (body !== false) peer.data(1, body, true);
      await bad.record.done;
      expect(bad.record.closed?.code).toBe(ErrorCode.PROTOCOL_ERROR);
      expect(bad.record.closed?.unprocessed).toBe(false);
      await eventually(() => peer.resets().length === 1, 2000, "RST_STREAM");
      expect(peer.resets()).toEqual([{ streamId: 1, code: ErrorCode.PROTOCOL_ERROR }]);
      const good = send(session, get(port));
      await requestsSeen(peer, 2);
      peer.headers(3, OK, true);
      await good.record.done;
      expect(good.record.closed?.code).toBe(0);
    },
  );

  it("resets a stream whose trailers lack END_STREAM", async () => {
    const { session, peer, port } = await connected();
    const { record } = send(session, get(port));
    await requestsSeen(peer, 1);
    peer.headers(1, OK, false);
    peer.headers(1, ["grpc-status", "0"], false);
    await record.done;
    expect(record.closed?.code).toBe(ErrorCode.PROTOCOL_ERROR);
    await eventually(() => peer.resets().length === 1, 2000, "RST_STREAM");
  });

  it("answers PING with an ACK of the same payload, and a stream WINDOW_UPDATE of 0 with RST_STREAM", async () => {
    const { session, peer, port } = await connected();
    peer.send(FrameType.PING, 0, 0, Buffer.from("abcdefgh"));
    await eventually(() => peer.of(FrameType.PING).length === 1, 2000, "the PING ACK");
    const ping = peer.of(FrameType.PING)[0];
    expect(ping?.flags).toBe(Flag.ACK);
    expect(ping?.payload.toString()).toBe("abcdefgh");
    const { record } = send(session, post(port), "x");
    await requestsSeen(peer, 1);
    peer.send(FrameType.WINDOW_UPDATE, 0, 1, [0, 0, 0, 0]);
    await record.done;
    expect(record.closed?.code).toBe(ErrorCode.PROTOCOL_ERROR);
    await eventually(() => peer.resets().length === 1, 2000, "RST_STREAM");
  });

  it("ends a connection whose peer floods PINGs without reading the acknowledgements", async () => {
    const { peer, record } = await connected();
    await eventually(() => record.readyCount === 1, 2000, "ready");
    peer.socket.pause();
    const ping = Buffer.from([0, 0, 8, FrameType.PING, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const batch = Buffer.concat(Array.from({ length: 4096 }, () => ping));
    let sent = 0;
    while (record.closed === undefined && sent < 64 * 1024 * 1024) {
      await new Promise<void>((resolve) => peer.socket.write(batch, () => resolve()));
      sent += batch.length;
    }
    const error = record.closed?.error;
    expect(error).toBeInstanceOf(Http2SessionError);
    expect(error instanceof Http2SessionError ? error.code : undefined).toBe(ErrorCode.ENHANCE_YOUR_CALM);
  });
});

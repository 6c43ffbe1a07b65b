import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, Flag, FrameType, Setting } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { get, openSession, post, runCleanups, StreamRecord, send } from "./h2-kit.js";
import { connected, OK, pingAnswered, rawServer, requestsSeen } from "./raw-peer.js";

/** The client against a server of hand-built frames: SETTINGS, GOAWAY, flow control and the framing corners. */

afterEach(runCleanups);

describe("Http2ClientSession against a hand-built peer", () => {
  it("sends the preface, SETTINGS without push, the connection WINDOW_UPDATE, and acknowledges the peer's SETTINGS", async () => {
    const { peer } = await connected([Setting.MAX_CONCURRENT_STREAMS, 10]);
    await eventually(() => peer.of(FrameType.SETTINGS).length >= 2, 2000, "SETTINGS and its ACK");
    const [settings, ack] = peer.of(FrameType.SETTINGS);
    const values = new Map<number, number>();
    for (let at = 0; at < (settings?.payload.length ?? 0); at += 6) {
      values.set(settings?.payload.readUInt16BE(at) ?? 0, settings?.payload.readUInt32BE(at + 2) ?? 0);
    }
    expect(values.get(Setting.ENABLE_PUSH)).toBe(0);
    expect(values.get(Setting.INITIAL_WINDOW_SIZE)).toBe(1024 * 1024);
    expect(ack?.flags).toBe(Flag.ACK);
    const update = peer.of(FrameType.WINDOW_UPDATE)[0];
    expect(update?.streamId).toBe(0);
    expect(update?.payload.readUInt32BE(0)).toBe(16 * 1024 * 1024 - 65_535);
  });

  it("holds requests until the peer's SETTINGS arrive, then sends them in order", async () => {
    const { session, peer, port } = await connected("none");
    const first = send(session, get(port));
    const second = send(session, get(port));
    expect(first.stream.id).toBeUndefined();
    peer.settings();
    await requestsSeen(peer, 2);
    expect(peer.requests()).toEqual([1, 3]);
    // Held, not merely late: the first HEADERS comes after the client acknowledged the peer's SETTINGS.
    const acked = peer.frames.findIndex((f) => f.type === FrameType.SETTINGS && f.flags === Flag.ACK);
    expect(acked).toBeGreaterThanOrEqual(0);
    expect(peer.frames.findIndex((f) => f.type === FrameType.HEADERS)).toBeGreaterThan(acked);
    expect(second.stream.id).toBe(3);
  });

  it("reports requests as unprocessed when the connection fails before the peer's SETTINGS", async () => {
    const { session, peer, port } = await connected("none");
    const { record } = send(session, get(port));
    peer.socket.destroy();
    await record.done;
    expect(record.closed?.unprocessed).toBe(true);
    expect(record.closed?.error).toBeInstanceOf(Error);
  });

  it("finishes streams up to a GOAWAY's last-stream-id and reports those above it unprocessed", async () => {
    const { session, record: sessionRecord, peer, port } = await connected();
    const sent = [send(session, get(port)), send(session, get(port)), send(session, get(port))];
    await requestsSeen(peer, 3);
    peer.send(FrameType.GOAWAY, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0]);
    peer.headers(1, OK, false);
    peer.data(1, "first", true);
    await Promise.all(sent.map(({ record }) => record.done));
    expect(sessionRecord.goaways).toEqual([{ last: 1, code: 0 }]);
    expect(sent[0]?.record.closed).toEqual({ code: 0, unprocessed: false, error: undefined });
    expect(sent[0]?.record.body()).toBe("first");
    for (const { record } of sent.slice(1)) {
      expect(record.closed?.unprocessed).toBe(true);
      expect(record.closed?.code).toBe(ErrorCode.REFUSED_STREAM);
    }
    expect(() => send(session, get(port))).toThrow();
    await eventually(
      () => sessionRecord.closed !== undefined,
      2000,
      "the session ended once its streams did",
    );
    expect(sessionRecord.closed?.error).toBeUndefined();
  });

  it("applies a SETTINGS_INITIAL_WINDOW_SIZE change mid-stream as a delta, even below zero", async () => {
    const { session, peer, port } = await connected([Setting.INITIAL_WINDOW_SIZE, 10]);
    const record = new StreamRecord();
    const stream = session.request(post(port), false, record);
    const dataBytes = () => peer.of(FrameType.DATA).reduce((sum, frame) => sum + frame.payload.length, 0);
    expect(stream.write(Buffer.alloc(100, 1))).toBe(false);
    stream.end();
    await eventually(() => dataBytes() === 10, 2000, "the first 10 octets");
    peer.settings([Setting.INITIAL_WINDOW_SIZE, 5]); // window 10 - 10 - 5 = -5
    peer.send(FrameType.WINDOW_UPDATE, 0, 1, [0, 0, 0, 15]); // -5 + 15 = 10
    await eventually(() => dataBytes() === 20, 2000, "10 more octets");
    await pingAnswered(peer, 1);
    expect(dataBytes()).toBe(20);
    peer.settings([Setting.INITIAL_WINDOW_SIZE, 85]); // +80
    await eventually(() => dataBytes() === 100, 2000, "the rest");
    const last = peer.of(FrameType.DATA).at(-1);
    expect(last?.flags).toBe(Flag.END_STREAM);
    expect(record.drains).toBe(1);
  });

  it("skips 1xx heads, removes padding and priority fields, and takes frames split one octet a write", async () => {
    const { session, peer, port } = await connected();
    const { record } = send(session, get(port));
    await requestsSeen(peer, 1);
    peer.headers(1, [":status", "103", "link", "</a>"], false);
    const block = peer.block([":status", "200", "x-a", "b"]);
    const headers = Buffer.concat([
      Buffer.from([2]),
      Buffer.from([0, 0, 0, 0, 16]),
      block,
      Buffer.from([0, 0]),
    ]);
    const data = Buffer.concat([Buffer.from([3]), Buffer.from("body"), Buffer.alloc(3)]);
    const bytes: Buffer[] = [];
    const original = peer.socket.write.bind(peer.socket);
    peer.socket.write = ((chunk: Buffer) => bytes.push(Buffer.from(chunk)) > 0) as typeof peer.socket.write;
    peer.send(FrameType.HEADERS, Flag.END_HEADERS | Flag.PADDED | Flag.PRIORITY, 1, headers);
    peer.send(FrameType.DATA, Flag.PADDED | Flag.END_STREAM, 1, data);
    peer.socket.write = original;
    for (const octet of Buffer.concat(bytes)) {
      peer.socket.write(Buffer.from([octet]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await record.done;
    expect(record.status).toBe(200);
    expect(record.fields).toEqual(["x-a", "b"]);
    expect(record.body()).toBe("body");
    expect(record.closed?.code).toBe(0);
  });

  it("ignores DATA and HEADERS for a stream it reset, counting the DATA in the connection window", async () => {
    const { session, peer, port, record: sessionRecord } = await connected();
    const first = send(session, get(port));
    await requestsSeen(peer, 1);
    first.stream.reset(ErrorCode.CANCEL);
    await first.record.done;
    peer.headers(1, OK, false);
    for (let i = 0; i < 600; i++) peer.data(1, Buffer.alloc(16_384), false);
    await eventually(
      () => peer.of(FrameType.WINDOW_UPDATE).length >= 2,
      3000,
      "the connection window credited",
    );
    const second = send(session, get(port));
    await requestsSeen(peer, 2);
    peer.headers(3, OK, true);
    await second.record.done;
    expect(second.record.closed?.code).toBe(0);
    expect(sessionRecord.closed).toBeUndefined();
    expect(peer.resets()).toEqual([{ streamId: 1, code: ErrorCode.CANCEL }]);
  });

  it("says so when the peer is no HTTP/2 server", async () => {
    const server = await rawServer((peer) => peer.socket.write("HTTP/1.1 400 Bad Request\r\n\r\n"), "none");
    const { session, record } = openSession(server.port);
    const { record: stream } = send(session, get(server.port));
    await stream.done;
    expect(stream.closed?.unprocessed).toBe(true);
    expect(record.closed?.error?.message).toMatch(/no HTTP\/2 SETTINGS/);
  });

  it("sends END_STREAM on the HEADERS or DATA frame written in the same tick, and an empty DATA frame later", async () => {
    const { session, peer, port } = await connected();
    const headersOnly = session.request(get(port), false, { ...noop });
    headersOnly.end();
    const withBody = session.request(post(port), false, { ...noop });
    withBody.write(Buffer.from("abc"));
    withBody.end();
    const late = session.request(post(port), false, { ...noop });
    late.write(Buffer.from("abc"));
    await requestsSeen(peer, 3);
    late.end();
    await eventually(() => peer.of(FrameType.DATA).length === 3, 2000, "three DATA frames");
    const [first] = peer.of(FrameType.HEADERS);
    expect(first?.flags).toBe(Flag.END_HEADERS | Flag.END_STREAM);
    const data = peer.of(FrameType.DATA).map((frame) => [frame.streamId, frame.flags, frame.payload.length]);
    expect(data).toEqual([
      [3, Flag.END_STREAM, 3],
      [5, 0, 3],
      [5, Flag.END_STREAM, 0],
    ]);
  });
});

const noop = {
  onHead: () => undefined,
  onData: () => undefined,
  onTrailers: () => undefined,
  onDrain: () => undefined,
  onClose: () => undefined,
};

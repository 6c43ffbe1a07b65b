import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, FrameType, Setting } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { get, nodeServer, openSession, post, runCleanups, StreamRecord, send } from "./h2-kit.js";
import { connected, OK, pingAnswered, type RawPeer, rawServer, requestsSeen } from "./raw-peer.js";

/** How streams end: what the peer's frames close, and what listeners close from inside their callbacks. */

afterEach(runCleanups);

/** A literal field with incremental indexing and a new name (RFC 7541 §6.2.1), neither Huffman-coded. */
function indexed(name: string, value: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x40, name.length]),
    Buffer.from(name),
    Buffer.from([value.length]),
    Buffer.from(value),
  ]);
}

/** A literal field without indexing and a new name, its value's length below 16,383. */
function literal(name: string, value: string): Buffer {
  const length = Buffer.from([0x7f, ((value.length - 127) & 0x7f) | 0x80, (value.length - 127) >> 7]);
  return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), length, Buffer.from(value)]);
}

describe("Http2ClientSession stream lifecycle", () => {
  it("resets only the stream whose response fields are over the bound, its block still decoded into the table", async () => {
    const server = await rawServer();
    const { session, record } = openSession(server.port, { maxHeaderListSize: 1024 });
    const big = send(session, get(server.port));
    await eventually(() => (server.peers[0]?.requests().length ?? 0) === 1, 2000, "the request");
    const peer = server.peers[0] as RawPeer;
    // :status 200, a field over the bound, then one the table keeps (RFC 9113 §10.5.1: the block is processed).
    const block = Buffer.concat([
      Buffer.from([0x88]),
      literal("x-big", "v".repeat(1100)),
      indexed("x-after", "kept"),
    ]);
    peer.send(FrameType.HEADERS, 0x5, 1, block);
    await big.record.done;
    expect(big.record.closed?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    expect(big.record.closed?.error?.message).toMatch(/SETTINGS_MAX_HEADER_LIST_SIZE/);
    expect(big.record.events).toEqual(["close"]);
    await eventually(() => peer.resets().length === 1, 2000, "RST_STREAM");
    expect(peer.resets()).toEqual([{ streamId: 1, code: ErrorCode.ENHANCE_YOUR_CALM }]);
    const next = send(session, get(server.port));
    await requestsSeen(peer, 2);
    // :status 200 and the dynamic table's newest entry.
    peer.send(FrameType.HEADERS, 0x5, 3, Buffer.from([0x88, 0xbe]));
    await next.record.done;
    expect(next.record.fields).toEqual(["x-after", "kept"]);
    expect(next.record.closed?.code).toBe(0);
    expect(record.closed).toBeUndefined();
  });

  it("completes a paused stream the peer resets with NO_ERROR after its whole response, and sends no more", async () => {
    const { session, peer, port } = await connected();
    const record = new StreamRecord();
    const stream = session.request(post(port), false, record);
    stream.write(Buffer.from("part"));
    stream.pause();
    await requestsSeen(peer, 1);
    peer.headers(1, OK, false);
    peer.data(1, "abc", true);
    peer.send(FrameType.RST_STREAM, 0, 1, [0, 0, 0, 0]);
    await pingAnswered(peer, 1);
    expect(record.closed).toBeUndefined();
    expect(stream.write(Buffer.from("more"))).toBe(true);
    stream.end();
    stream.resume();
    await record.done;
    expect(record.body()).toBe("abc");
    expect(record.closed).toEqual({ code: 0, unprocessed: false, error: undefined });
    await pingAnswered(peer, 2);
    expect(peer.of(FrameType.DATA).map((frame) => frame.payload.toString())).toEqual(["part"]);
  });

  it("resets a stream that gets DATA after END_STREAM with STREAM_CLOSED", async () => {
    const { session, peer, port } = await connected();
    const record = new StreamRecord();
    session.request(post(port), false, record);
    await requestsSeen(peer, 1);
    peer.headers(1, OK, true);
    peer.data(1, "late", false);
    await record.done;
    expect(record.closed?.code).toBe(ErrorCode.STREAM_CLOSED);
    await eventually(() => peer.resets().length === 1, 2000, "RST_STREAM");
    expect(peer.resets()).toEqual([{ streamId: 1, code: ErrorCode.STREAM_CLOSED }]);
  });

  it("closes every stream once, queued ones too, when a listener destroys the session as a GOAWAY refuses its stream", async () => {
    const { session, peer, port, record, socket } = await connected([Setting.MAX_CONCURRENT_STREAMS, 1]);
    const streams = [send(session, get(port)), send(session, get(port)), send(session, get(port))];
    await requestsSeen(peer, 1);
    let sessionClosedAfter = -1;
    (streams[0] as (typeof streams)[0]).record.onClosed = () => session.destroy();
    const onClose = record.onClose.bind(record);
    record.onClose = (error) => {
      sessionClosedAfter = streams.filter((s) => s.record.closed !== undefined).length;
      onClose(error);
    };
    peer.send(FrameType.GOAWAY, 0, 0, Buffer.alloc(8));
    await Promise.all(streams.map((s) => s.record.done));
    await eventually(() => socket.closed, 2000, "the connection closed");
    expect(streams.map((s) => s.record.events.filter((e) => e === "close").length)).toEqual([1, 1, 1]);
    expect(streams.map((s) => s.record.closed?.unprocessed)).toEqual([true, true, true]);
    expect(sessionClosedAfter).toBe(3);
    expect(session.openStreams).toBe(0);
  });
});

describe("Http2ClientSession close()", () => {
  it("still sends the streams queued when it was called, then GOAWAY, to a server that stops at a client's GOAWAY", async () => {
    const { port, sessions } = await nodeServer(
      (stream) => {
        stream.respond({ ":status": 200 });
        setTimeout(() => stream.end("done"), 20);
      },
      { maxConcurrentStreams: 1 },
    );
    const { session, record } = openSession(port);
    const first = send(session, get(port));
    const queued = send(session, get(port));
    await eventually(() => first.stream.id !== undefined, 2000, "the first stream sent");
    const goaway = new Promise<void>((resolve) => [...sessions][0]?.on("goaway", () => resolve()));
    session.close();
    await Promise.all([first.record.done, queued.record.done]);
    expect([first.record.closed?.code, queued.record.closed?.code]).toEqual([0, 0]);
    expect(queued.record.body()).toBe("done");
    await goaway;
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
    expect(record.closed?.error).toBeUndefined();
  });
});

import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, FrameType, Setting } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { get, nodeServer, openSession, post, runCleanups, StreamRecord, send } from "./h2-kit.js";
import { connected, OK, pingAnswered, requestsSeen } from "./raw-peer.js";

/** Pausing, holding and back-pressure on a stream, and listeners that act on the session as they are called. */

afterEach(runCleanups);

describe("an HTTP/2 client stream's flow", () => {
  it("holds DATA, trailers and the close while paused, then delivers them in order", async () => {
    const { session, peer, port } = await connected();
    const record = new StreamRecord();
    const stream = session.request(get(port), true, {
      ...record,
      onHead: (status, fields, end) => {
        record.onHead(status, fields, end);
        stream.pause();
      },
      onData: (chunk) => record.onData(chunk),
      onTrailers: (fields) => record.onTrailers(fields),
      onDrain: () => record.onDrain(),
      onClose: (code, unprocessed, error) => record.onClose(code, unprocessed, error),
    });
    await requestsSeen(peer, 1);
    peer.headers(1, OK, false);
    peer.data(1, "one", false);
    peer.data(1, "two", false);
    peer.headers(1, ["grpc-status", "0"], true);
    // Once the PING is answered the client has read all of it: what it delivered by then is what pausing let by.
    await pingAnswered(peer, 1);
    expect(record.events).toEqual(["head"]);
    stream.resume();
    await record.done;
    expect(record.events.slice(-2)).toEqual(["trailers", "close"]);
    expect(record.body()).toBe("onetwo");
    expect(record.closed?.code).toBe(0);
  });

  it("lets other streams go on while one is paused with a full window", async () => {
    const { port } = await nodeServer((stream, headers) => {
      stream.respond({ ":status": 200 });
      const size = headers[":path"] === "/big" ? 3 * 1024 * 1024 : 256 * 1024;
      stream.end(Buffer.alloc(size, 1));
    });
    const { session } = openSession(port, { initialStreamWindow: 256 * 1024, connectionWindow: 65_535 });
    const paused = send(session, get(port, "/held"));
    paused.record.onChunk = () => {
      paused.record.onChunk = undefined;
      paused.stream.pause();
    };
    await eventually(() => paused.record.bytes() > 0, 2000, "the held stream began");
    const big = send(session, get(port, "/big"));
    await big.record.done;
    expect(big.record.bytes()).toBe(3 * 1024 * 1024);
    expect(paused.record.closed).toBeUndefined();
    paused.stream.resume();
    await paused.record.done;
    expect(paused.record.bytes()).toBe(256 * 1024);
  });

  it("sends what was written to a queued stream after its HEADERS, and calls onDrain", async () => {
    const { session, peer, port } = await connected([Setting.MAX_CONCURRENT_STREAMS, 1]);
    await eventually(() => session.ready, 2000, "ready");
    const first = send(session, get(port));
    const record = new StreamRecord();
    const queued = session.request(post(port), false, record);
    expect(queued.write(Buffer.from("early"))).toBe(false);
    queued.end();
    await requestsSeen(peer, 1);
    peer.headers(1, OK, true);
    await first.record.done;
    await requestsSeen(peer, 2);
    await eventually(() => peer.of(FrameType.DATA).length === 1, 2000, "the DATA");
    const data = peer.of(FrameType.DATA)[0];
    expect([data?.streamId, data?.flags, data?.payload.toString()]).toEqual([3, 1, "early"]);
    expect(record.drains).toBe(1);
  });

  it("keeps what it hands the socket bounded when the peer grants windows but does not read", async () => {
    const { session, peer, port, socket } = await connected([Setting.INITIAL_WINDOW_SIZE, 0x7fff_ffff]);
    peer.send(FrameType.WINDOW_UPDATE, 0, 0, [0x7f, 0xfe, 0xff, 0xff]);
    await eventually(() => session.ready, 2000, "ready");
    peer.socket.pause();
    const record = new StreamRecord();
    const stream = session.request(post(port), false, record);
    const chunk = Buffer.alloc(64 * 1024, 2);
    let written = 0;
    let most = 0;
    const pump = () => {
      while (written < 64 * 1024 * 1024) {
        written += chunk.length;
        most = Math.max(most, socket.writableLength);
        if (!stream.write(chunk)) return;
      }
      stream.end();
    };
    record.onDrained = pump;
    pump();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written).toBeLessThan(64 * 1024 * 1024);
    expect(most).toBeLessThan(1024 * 1024);
    peer.socket.resume();
    await eventually(
      () => peer.of(FrameType.DATA).some((frame) => frame.flags === 1),
      20_000,
      "the whole body",
    );
    const bytes = peer.of(FrameType.DATA).reduce((sum, frame) => sum + frame.payload.length, 0);
    expect(bytes).toBe(64 * 1024 * 1024);
  });

  it("keeps DATA frames small enough that a large write to a peer allowing huge frames leaves PINGs answerable", async () => {
    const {
      session,
      peer,
      port,
      record: sessionRecord,
    } = await connected([Setting.INITIAL_WINDOW_SIZE, 0x7fff_ffff, Setting.MAX_FRAME_SIZE, 0xff_ffff]);
    peer.send(FrameType.WINDOW_UPDATE, 0, 0, [0x7f, 0xfe, 0xff, 0xff]);
    await eventually(() => session.ready, 2000, "ready");
    peer.socket.pause();
    const stream = session.request(post(port), false, new StreamRecord());
    stream.write(Buffer.alloc(12 * 1024 * 1024, 3));
    await new Promise((resolve) => setTimeout(resolve, 50));
    peer.send(FrameType.PING, 0, 0, Buffer.alloc(8));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sessionRecord.closed).toBeUndefined();
    stream.reset(ErrorCode.CANCEL);
  });

  it("reports queued requests unprocessed when the connection is refused", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    await new Promise((resolve) => server.close(resolve));
    const { session, record } = openSession(port);
    const { record: stream } = send(session, get(port));
    await stream.done;
    expect(stream.closed?.unprocessed).toBe(true);
    expect(stream.closed?.code).toBe(ErrorCode.CANCEL);
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
    expect((record.closed?.error?.cause as NodeJS.ErrnoException | undefined)?.code).toBe("ECONNREFUSED");
  });

  it("takes a destroy() from inside onData and a reset() from inside onHead", async () => {
    const rstCodes: number[] = [];
    const { port } = await nodeServer((stream) => {
      stream.on("close", () => rstCodes.push(stream.rstCode ?? -1));
      stream.respond({ ":status": 200 });
      stream.write("x");
    });
    const { session, record: sessionRecord } = openSession(port);
    const record = new StreamRecord();
    const stream = session.request(get(port), true, {
      ...record,
      onHead: () => stream.reset(ErrorCode.INTERNAL_ERROR),
      onData: () => record.onData(Buffer.alloc(0)),
      onTrailers: () => undefined,
      onDrain: () => undefined,
      onClose: (code, unprocessed, error) => record.onClose(code, unprocessed, error),
    });
    await record.done;
    expect(record.closed?.code).toBe(ErrorCode.INTERNAL_ERROR);
    expect(record.events).toEqual(["close"]);
    await eventually(() => rstCodes.includes(ErrorCode.INTERNAL_ERROR), 2000, "the server saw the reset");
    const other = send(session, get(port));
    other.record.onChunk = () => session.destroy(new Error("enough"));
    await other.record.done;
    expect(other.record.closed?.error?.message).toBe("enough");
    expect(session.destroyed).toBe(true);
    expect(sessionRecord.closed?.error?.message).toBe("enough");
  });
});

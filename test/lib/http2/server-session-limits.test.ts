import { afterEach, describe, expect, it } from "vitest";
import type { BodyListener } from "../../../lib/http2/api.js";
import { ErrorCode, Flag, FrameType, Setting } from "../../../lib/http2/frames.js";
import type { ServerStream } from "../../../lib/http2/server-session.js";
import { frame } from "../../functions/node/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { runCleanups } from "./h2-kit.js";
import { answerLastStream, BodyRecord, dataFrame, GET, open, POST } from "./server-kit.js";

/**
 * Http2ServerSession's bounds on what a client holds us to: streams that close once answered, payloads that do
 * not pin their read, a client that never reads, responses that wait on a client that never opens its
 * windows, refusals after our GOAWAY, and a request handler that throws. Raw client over loopback TCP.
 */

afterEach(runCleanups);

/** Keeps the chunks as the stream hands them over (no copy), to see what memory they hold. */
class RawChunks implements BodyListener {
  readonly chunks: Buffer[] = [];
  onData(chunk: Buffer): void {
    this.chunks.push(chunk);
  }
  onTrailers(): void {}
  onDrain(): void {}
  onClose(): void {}
}

/** A listener whose onData throws: a defect in the code that reads a body. */
class FailingOnData extends BodyRecord {
  override onData(): void {
    throw new Error("the listener failed");
  }
}

describe("Http2ServerSession: a stream ends once its response has gone (RFC 9113 §8.1)", () => {
  it("closes a stream whose whole request is held unread once its response ends, and sends no RST_STREAM", async () => {
    const { client, side } = await open({}, (stream) => stream.respond([":status", "404"], true));
    const head = client.headersFrame(1, [...POST, "content-length", "1"], false);
    client.write(Buffer.concat([head, dataFrame(1, "x", true)]));
    await client.until(() => client.streamEnded(1), "the answer on stream 1");
    await eventually(() => side.requestsClosed === 1, 2000, "onRequestClosed for stream 1");
    expect(side.session.openStreams).toBe(0);
    await client.sync();
    expect(client.resets()).toEqual(new Map());
  });

  it("sends RST_STREAM NO_ERROR after the whole response to a client still sending its request", async () => {
    const { client, side } = await open({}, (stream) => {
      stream.respond([":status", "200"], false);
      stream.write(Buffer.from("early"));
      stream.end();
    });
    client.write(Buffer.concat([client.headersFrame(1, POST, false), dataFrame(1, "part", false)]));
    await client.until(() => client.resets().has(1), "RST_STREAM on stream 1");
    const onStream = client.frames
      .filter((f) => f.stream === 1)
      .map((f) => [f.type, f.flags & Flag.END_STREAM]);
    expect(onStream).toEqual([
      [FrameType.HEADERS, 0],
      [FrameType.DATA, Flag.END_STREAM],
      [FrameType.RST_STREAM, 0],
    ]);
    expect(client.resets().get(1)).toBe(ErrorCode.NO_ERROR);
    expect(client.dataBytes(1)).toBe(5);
    await eventually(() => side.requestsClosed === 1, 2000, "onRequestClosed for stream 1");
  });
});

describe("Http2ServerSession: DATA payloads and the reads they came in", () => {
  /** A 1-byte DATA and a skipped 16,000-octet frame of unknown type 0xfa, in one write (so one read). */
  const padded = Buffer.concat([dataFrame(1, "x", false), frame(0xfa, 0, 0, Buffer.alloc(16_000, 0x70))]);

  it("holds a 1-byte DATA payload of a 16 KB read as a copy of its own while the stream is paused", async () => {
    const { client, side } = await open();
    client.headers(1, POST, false);
    await eventually(() => side.requests.length === 1, 2000, "the request");
    client.write(padded);
    await client.sync();
    const stream = side.requests[0] as ServerStream;
    const chunks = new RawChunks();
    stream.listen(chunks);
    stream.resume();
    expect(chunks.chunks.map((chunk) => chunk.toString())).toEqual(["x"]);
    expect(chunks.chunks[0]?.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
  });

  it("hands a reading listener a 1-byte DATA payload of a 16 KB read as a copy of its own", async () => {
    const chunks = new RawChunks();
    const { client } = await open({}, (stream) => {
      stream.listen(chunks);
      stream.resume();
    });
    client.headers(1, POST, false);
    await client.sync();
    client.write(padded);
    await client.sync();
    expect(chunks.chunks.map((chunk) => chunk.toString())).toEqual(["x"]);
    expect(chunks.chunks[0]?.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
  });
});

describe("Http2ServerSession: a client that does not read", () => {
  it("ends the session of a client that keeps asking and never reads once 4 MiB of answers wait unsent for it", async () => {
    const answer = [":status", "404", "content-type", "text/plain", "x-pad", "p".repeat(4000)];
    const { client, side } = await open({}, (stream) => stream.respond(answer, true));
    const clientClosed = new Promise<void>((resolve) => client.socket.once("close", () => resolve()));
    client.socket.pause();
    // Batches of 100 (one read each, within maxConcurrentStreams), 10,000 requests at most: 40 MB of answers,
    // far past 4 MiB and what the loopback socket buffers hold.
    const deadline = Date.now() + 5000;
    for (let sent = 0; sent < 10_000 && side.closed === undefined; sent += 100) {
      client.write(
        Buffer.concat(
          Array.from({ length: 100 }, (_, i) => client.headersFrame(2 * (sent + i) + 1, GET, true)),
        ),
      );
      while (side.closed === undefined && side.requests.length < sent + 100) {
        if (Date.now() > deadline) throw new Error(`${sent + 100} requests not handled in 5 s`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    expect(side.closed, "onClose after 10,000 requests whose answers the client never read").toBeDefined();
    expect(side.closed?.error?.message).toMatch(/does not read/);
    await eventually(() => side.session.socket.destroyed, 3000, "the server's socket destroyed");
    client.socket.resume();
    await clientClosed;
  });

  it("resets with CANCEL, after idleTimeoutMs, a stream whose response waits on a client that opens no window, and ends the session", async () => {
    const record = new BodyRecord();
    const { client, side } = await open(
      { idleTimeoutMs: 200 },
      (stream) => {
        stream.listen(record);
        stream.respond([":status", "200"], false);
        stream.write(Buffer.from("never sent"));
      },
      [Setting.INITIAL_WINDOW_SIZE, 0],
    );
    client.headers(1, GET, true);
    await client.until(() => client.resets().has(1), "RST_STREAM on stream 1");
    expect(client.resets().get(1)).toBe(ErrorCode.CANCEL);
    expect(client.dataBytes(1)).toBe(0);
    expect(record.events).toEqual([`close:${ErrorCode.CANCEL}`]);
    await client.until(() => client.ended, "the server's FIN");
    expect(side.closed).toBeDefined();
    expect(side.session.destroyed).toBe(true);
  });
});

describe("Http2ServerSession: refusals after close() (RFC 9113 §6.8)", () => {
  it("refuses 150 streams opened after its GOAWAY with REFUSED_STREAM without counting them as a flood, and lets the open stream finish", async () => {
    const { client, side } = await open();
    client.headers(1, GET, true);
    await eventually(() => side.requests.length === 1, 2000, "the request on stream 1");
    side.session.close();
    expect(await client.goaway()).toEqual({ last: 1, code: ErrorCode.NO_ERROR });
    const late = Array.from({ length: 150 }, (_, i) => 3 + 2 * i);
    client.write(Buffer.concat(late.map((id) => client.headersFrame(id, GET, true))));
    await client.until(() => client.resets().size === 150 || client.goaways().length > 1, "150 refusals");
    expect(client.goaways()).toEqual([{ last: 1, code: ErrorCode.NO_ERROR }]);
    expect(side.floods).toEqual([]);
    await client.sync();
    expect(client.resets()).toEqual(new Map(late.map((id) => [id, ErrorCode.REFUSED_STREAM])));
    expect(side.requests).toHaveLength(1);
    await answerLastStream(side.requests[0] as ServerStream, client);
    expect(client.streamEnded(1)).toBe(true);
    expect(client.dataBytes(1)).toBe(4);
    expect(side.closed).toEqual({ error: undefined });
  });
});

describe("Http2ServerSession: empty frames (CVE-2019-9518)", () => {
  it("ends the session past 1,000 DATA frames with no payload nor END_STREAM within 10 s", async () => {
    const { client, side } = await open();
    client.write(client.headersFrame(1, POST, false));
    client.write(Buffer.concat(Array.from({ length: 1_000 }, () => frame(FrameType.DATA, 0, 1))));
    await client.sync();
    expect(client.goaways()).toEqual([]);
    client.write(frame(FrameType.DATA, 0, 1));
    expect((await client.goaway()).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    expect(side.floods).toEqual(["empty_frames"]);
  });
});

describe("Http2ServerSession: a request handler that throws", () => {
  it("resets only the stream whose onRequest threw, with INTERNAL_ERROR, and serves the next request", async () => {
    const { client, side } = await open({}, (stream) => {
      if (stream.id === 1) throw new Error("the handler failed");
      stream.respond([":status", "204"], true);
    });
    client.headers(1, GET, true);
    await client.until(() => client.resets().has(1), "RST_STREAM on stream 1");
    expect(client.resets().get(1)).toBe(ErrorCode.INTERNAL_ERROR);
    client.headers(3, GET, true);
    await client.until(() => client.streamEnded(3), "the answer on stream 3");
    expect(client.of(FrameType.HEADERS, 3)[0]?.fields).toEqual([":status", "204"]);
    expect(client.goaways()).toEqual([]);
    expect(side.closed).toBeUndefined();
    await eventually(() => side.requestsClosed === 2, 2000, "both streams closed");
  });

  it("ends only the session of a client whose body a listener failed on, with GOAWAY INTERNAL_ERROR, and tells onFailure", async () => {
    const { client, side } = await open({}, (stream) => {
      stream.listen(new FailingOnData());
      stream.resume();
    });
    client.write(client.headersFrame(1, POST, false));
    await eventually(() => side.requests.length === 1, 2000, "the request handed out");
    // In a read of its own: the listener fails inside the session's socket handler, not inside onRequest.
    client.write(dataFrame(1, "x", false));
    const goaway = await client.goaway();
    expect(goaway.code).toBe(ErrorCode.INTERNAL_ERROR);
    expect(side.failures).toHaveLength(1);
    expect(String(side.failures[0])).toContain("the listener failed");
    await eventually(() => side.closed !== undefined, 2000, "the session's onClose");
  });
});

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import * as http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, Flag, FrameType, Setting } from "../../../lib/http2/frames.js";
import type { ServerStream } from "../../../lib/http2/server-session.js";
import { eventually } from "../../support/eventually.js";
import { cleanups, runCleanups } from "./h2-kit.js";
import {
  answerLastStream,
  BodyRecord,
  dataFrame,
  GET,
  open,
  POST,
  type ServerSide,
  serve,
  u32,
} from "./server-kit.js";

/** Http2ServerSession's request bodies, responses, flow control and graceful close, against a raw client. */

afterEach(runCleanups);

function requestOf(side: ServerSide, index = 0): ServerStream {
  const stream = side.requests[index];
  if (stream === undefined) throw new Error(`no request ${index} reached onRequest`);
  return stream;
}

describe("Http2ServerSession: the request body", () => {
  it("holds DATA and trailers that come before resume(), delivers them in order after it, then calls onEnd", async () => {
    const { client, side } = await open();
    const trailers = client.headersFrame(1, ["x-checksum", "abc"], true);
    client.write(Buffer.concat([client.headersFrame(1, POST, false), dataFrame(1, "one", false)]));
    client.write(Buffer.concat([dataFrame(1, "two", false), trailers]));
    await client.sync();
    const stream = requestOf(side);
    const record = new BodyRecord();
    stream.listen(record);
    expect(record.events).toEqual([]);
    stream.resume();
    expect(record.events).toEqual(["data:one", "data:two", "trailers:x-checksum,abc", "end"]);
  });

  it("sends no stream WINDOW_UPDATE for DATA it holds, and credits the stream once the DATA is delivered", async () => {
    const { client, side } = await open({ initialStreamWindow: 1000 });
    client.write(
      Buffer.concat([client.headersFrame(1, POST, false), dataFrame(1, Buffer.alloc(600, 97), false)]),
    );
    await client.sync();
    expect(client.of(FrameType.WINDOW_UPDATE, 1)).toEqual([]);
    const stream = requestOf(side);
    const record = new BodyRecord();
    stream.listen(record);
    stream.resume();
    expect(record.events).toEqual(["data:600"]);
    await client.until(
      () => client.of(FrameType.WINDOW_UPDATE, 1).length === 1,
      "a WINDOW_UPDATE on stream 1",
    );
    expect(client.of(FrameType.WINDOW_UPDATE, 1)[0]?.payload.readUInt32BE(0)).toBe(600);
  });
});

describe("Http2ServerSession: the response", () => {
  it("sends respond(), write() and end(trailers) as HEADERS, DATA and trailing HEADERS with END_STREAM", async () => {
    const { client, side } = await open({}, (stream) => {
      stream.respond([":status", "200", "content-type", "text/plain"], false);
      stream.write(Buffer.from("hello"));
      stream.end(["grpc-status", "0"]);
    });
    client.headers(1, GET, true);
    await client.until(() => client.streamEnded(1), "END_STREAM on stream 1");
    const frames = client.frames.filter((f) => f.stream === 1);
    expect(frames.map((f) => [f.type, f.flags])).toEqual([
      [FrameType.HEADERS, Flag.END_HEADERS],
      [FrameType.DATA, 0],
      [FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM],
    ]);
    expect(frames[0]?.fields).toEqual([":status", "200", "content-type", "text/plain"]);
    expect(frames[1]?.payload.toString()).toBe("hello");
    expect(frames[2]?.fields).toEqual(["grpc-status", "0"]);
    await eventually(() => side.requestsClosed === 1, 2000, "onRequestClosed");
  });

  it("sends a response only up to the client's 1000-octet stream window, the rest after its WINDOW_UPDATE, then onDrain", async () => {
    const { client, side } = await open({}, undefined, [Setting.INITIAL_WINDOW_SIZE, 1000]);
    client.headers(1, GET, true);
    await client.sync();
    const stream = requestOf(side);
    const record = new BodyRecord();
    stream.listen(record);
    stream.respond([":status", "200"], false);
    expect(stream.write(Buffer.alloc(3000, 120))).toBe(false);
    await client.sync();
    expect(client.dataBytes(1)).toBe(1000);
    expect(record.drains).toBe(0);
    client.send(FrameType.WINDOW_UPDATE, 0, 1, u32(2000));
    await client.until(() => client.dataBytes(1) === 3000, "3000 octets of DATA");
    await eventually(() => record.drains === 1, 2000, "onDrain");
    stream.end();
    await client.until(() => client.streamEnded(1), "END_STREAM on stream 1");
    expect(client.dataBytes(1)).toBe(3000);
  });

  it('sends inform([":status", "100"]) as HEADERS without END_STREAM, then the final response', async () => {
    const { client } = await open({}, (stream) => {
      stream.inform([":status", "100"]);
      stream.respond([":status", "204"], true);
    });
    client.headers(1, [...POST, "expect", "100-continue"], true);
    await client.until(() => client.streamEnded(1), "END_STREAM on stream 1");
    const heads = client.of(FrameType.HEADERS, 1);
    expect(heads.map((f) => [f.flags, f.fields])).toEqual([
      [Flag.END_HEADERS, [":status", "100"]],
      [Flag.END_HEADERS | Flag.END_STREAM, [":status", "204"]],
    ]);
  });

  it("echoes a 256 KiB request body to node:http2's client through both directions' flow control", async () => {
    const { port } = await serve({}, (stream) => {
      stream.listen({
        onData: (chunk) => {
          if (!stream.write(Buffer.from(chunk))) stream.pause();
        },
        onTrailers: () => undefined,
        onEnd: () => stream.end(),
        onDrain: () => stream.resume(),
        onClose: () => undefined,
      });
      stream.respond([":status", "200"], false);
      stream.resume();
    });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => undefined);
    cleanups.push(() => {
      session.destroy();
    });
    const body = randomBytes(256 * 1024);
    const request = session.request({ ":method": "POST", ":path": "/echo" });
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.end(body);
    await once(request, "end");
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
  });
});

describe("Http2ServerSession: close() (RFC 9113 §6.8)", () => {
  it("sends GOAWAY NO_ERROR with the last stream opened, lets that stream finish, refuses newer ones, then ends the socket", async () => {
    const { client, side } = await open();
    client.headers(1, GET, true);
    await client.sync();
    side.session.close();
    expect(await client.goaway()).toEqual({ last: 1, code: ErrorCode.NO_ERROR });
    client.headers(3, GET, true);
    await client.until(() => client.resets().has(3), "RST_STREAM on stream 3");
    await client.sync();
    expect(client.resets().get(3)).toBe(ErrorCode.REFUSED_STREAM);
    expect(side.requests).toHaveLength(1);
    expect(client.ended).toBe(false);
    await answerLastStream(requestOf(side), client);
    expect(client.streamEnded(1)).toBe(true);
    expect(client.dataBytes(1)).toBe(4);
    expect(client.goaways()).toHaveLength(1);
    expect(side.closed).toEqual({ error: undefined });
  });

  it("never raises the last-stream-id of a later GOAWAY above the one close() sent", async () => {
    const { client, side } = await open();
    client.headers(1, GET, true);
    await client.sync();
    side.session.close();
    await client.goaway();
    client.headers(3, GET, true);
    await client.until(() => client.resets().has(3), "RST_STREAM on stream 3");
    client.headers(4, GET, true);
    await client.until(() => client.goaways().length === 2, "a second GOAWAY");
    expect(client.goaways()).toEqual([
      { last: 1, code: ErrorCode.NO_ERROR },
      { last: 1, code: ErrorCode.PROTOCOL_ERROR },
    ]);
  });
});

import { constants } from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { field, get, nodeServer, openSession, post, runCleanups, StreamRecord, send } from "./h2-kit.js";

/** The client against node:http2's own server: round trips, concurrency, flow control, resets. */

afterEach(runCleanups);

describe("Http2ClientSession against node:http2", () => {
  it("gets a response's status, fields and body, and reports the session ready", async () => {
    const { port } = await nodeServer((stream, headers) => {
      stream.respond({ ":status": 200, "content-type": "text/plain", "x-path": String(headers[":path"]) });
      stream.end("hello");
    });
    const { session, record: sessionRecord } = openSession(port);
    const { record } = send(session, get(port, "/hi", ["x-test", "1"]));
    await record.done;
    expect(sessionRecord.readyCount).toBe(1);
    expect(session.ready).toBe(true);
    expect(record.status).toBe(200);
    expect(field(record.fields, "content-type")).toBe("text/plain");
    expect(field(record.fields, "x-path")).toBe("/hi");
    expect(record.fields?.some((name) => name.startsWith(":"))).toBe(false);
    expect(record.body()).toBe("hello");
    expect(record.closed).toEqual({ code: 0, unprocessed: false, error: undefined });
    expect(session.openStreams).toBe(0);
  });

  it("posts a body and hears the trailers as gRPC sends them", async () => {
    const { port } = await nodeServer((stream) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "grpc-message": "OK" }));
        stream.end(Buffer.concat(chunks));
      });
    });
    const { session } = openSession(port);
    const message = Buffer.from([0, 0, 0, 0, 5, 104, 101, 108, 108, 111]);
    const { record } = send(
      session,
      post(port, "/pkg.Svc/Call", ["content-type", "application/grpc", "te", "trailers"]),
      message,
    );
    await record.done;
    expect(record.status).toBe(200);
    expect(Buffer.concat(record.chunks).equals(message)).toBe(true);
    expect(record.trailers).toEqual(["grpc-status", "0", "grpc-message", "OK"]);
    expect(record.events.at(-2)).toBe("trailers");
    expect(record.closed?.code).toBe(0);
  });

  it("answers a HEAD request whose content-length announces a body it does not carry", async () => {
    const { port } = await nodeServer((stream) => {
      stream.respond({ ":status": 200, "content-length": "1234" }, { endStream: true });
    });
    const { session } = openSession(port);
    const fields = get(port);
    fields[1] = "HEAD";
    const { record } = send(session, fields);
    await record.done;
    expect(record.closed?.error).toBeUndefined();
    expect(field(record.fields, "content-length")).toBe("1234");
  });

  it("carries many concurrent streams on one session, in odd increasing ids", async () => {
    const { port, sessions } = await nodeServer((stream, headers) => {
      stream.respond({ ":status": 200 });
      setTimeout(() => stream.end(`body of ${headers[":path"]}`), Math.random() * 20);
    });
    const { session } = openSession(port);
    const sent = Array.from({ length: 200 }, (_, i) => send(session, get(port, `/${i}`)));
    await Promise.all(sent.map(({ record }) => record.done));
    sent.forEach(({ stream, record }, i) => {
      expect(record.body()).toBe(`body of /${i}`);
      expect(stream.id).toBe(2 * i + 1);
    });
    expect(sessions.size).toBe(1);
  });

  it("sends and receives 1 MiB bodies past both peers' windows, with back-pressure both ways", async () => {
    let serverPaused = 0;
    const { port } = await nodeServer((stream) => {
      stream.respond({ ":status": 200 });
      // The server reads slowly at first: the client's send window must close and open again.
      stream.pause();
      serverPaused++;
      setTimeout(() => {
        stream.resume();
        stream.pipe(stream);
      }, 50);
    });
    const { session } = openSession(port, { initialStreamWindow: 65_535 });
    const record = new StreamRecord();
    const stream = session.request(post(port), false, record);
    const body = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) & 0xff;
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 100_000);
        offset += chunk.length;
        if (!stream.write(chunk)) return;
      }
      stream.end();
    };
    record.onDrained = pump;
    pump();
    let pauses = 0;
    record.onChunk = () => {
      if (record.bytes() < 300_000 || pauses > 0) return;
      pauses++;
      stream.pause();
      setTimeout(() => stream.resume(), 100);
    };
    await record.done;
    expect(serverPaused).toBe(1);
    expect(record.drains).toBeGreaterThan(0);
    expect(pauses).toBe(1);
    expect(record.closed).toEqual({ code: 0, unprocessed: false, error: undefined });
    expect(Buffer.concat(record.chunks).equals(body)).toBe(true);
  });

  it("queues streams beyond the peer's SETTINGS_MAX_CONCURRENT_STREAMS and sends them as others close", async () => {
    let active = 0;
    let most = 0;
    const { port } = await nodeServer(
      (stream) => {
        active++;
        most = Math.max(most, active);
        stream.on("close", () => active--);
        stream.respond({ ":status": 200 });
        setTimeout(() => stream.end("ok"), 10);
      },
      { maxConcurrentStreams: 2 },
    );
    const { session } = openSession(port);
    const first = send(session, get(port));
    await first.record.done;
    expect(session.peerMaxConcurrentStreams).toBe(2);
    const sent = Array.from({ length: 8 }, () => send(session, get(port)));
    expect(session.openStreams).toBe(8);
    expect(sent.filter(({ stream }) => stream.id === undefined)).toHaveLength(6);
    await Promise.all(sent.map(({ record }) => record.done));
    expect(sent.every(({ record }) => record.body() === "ok")).toBe(true);
    expect(most).toBe(2);
    expect(sent.map(({ stream }) => stream.id)).toEqual([3, 5, 7, 9, 11, 13, 15, 17]);
  });

  it("reports the code of a RST_STREAM from the peer, and REFUSED_STREAM as unprocessed", async () => {
    const { port } = await nodeServer((stream, headers) => {
      const refused = headers[":path"] === "/refused";
      stream.close(refused ? constants.NGHTTP2_REFUSED_STREAM : constants.NGHTTP2_INTERNAL_ERROR);
    });
    const { session } = openSession(port);
    const broken = send(session, get(port, "/broken"));
    const refused = send(session, get(port, "/refused"));
    await Promise.all([broken.record.done, refused.record.done]);
    expect(broken.record.closed?.code).toBe(ErrorCode.INTERNAL_ERROR);
    expect(broken.record.closed?.unprocessed).toBe(false);
    expect(broken.record.closed?.error?.message).toMatch(/reset by the peer/);
    expect(refused.record.closed?.code).toBe(ErrorCode.REFUSED_STREAM);
    expect(refused.record.closed?.unprocessed).toBe(true);
    const after = send(session, get(port, "/broken"));
    await after.record.done;
    expect(session.destroyed).toBe(false);
  });

  it("resets a stream with CANCEL, which the peer sees, and the session goes on", async () => {
    const rstCodes: number[] = [];
    const { port } = await nodeServer((stream, headers) => {
      stream.on("close", () => rstCodes.push(stream.rstCode ?? -1));
      stream.respond({ ":status": 200 });
      if (headers[":path"] === "/ok") stream.end("fine");
      else stream.write("partial");
    });
    const { session } = openSession(port);
    const hanging = send(session, get(port, "/hang"));
    hanging.record.onChunk = () => hanging.stream.reset(ErrorCode.CANCEL);
    await hanging.record.done;
    expect(hanging.record.closed?.code).toBe(ErrorCode.CANCEL);
    expect(hanging.record.closed?.unprocessed).toBe(false);
    await eventually(
      () => rstCodes.includes(constants.NGHTTP2_CANCEL),
      2000,
      "the server saw RST_STREAM CANCEL",
    );
    const ok = send(session, get(port, "/ok"));
    await ok.record.done;
    expect(ok.record.body()).toBe("fine");
  });

  it("closes every open stream with an error when the peer closes the socket", async () => {
    const { port, sockets } = await nodeServer((stream) => {
      stream.respond({ ":status": 200 });
      stream.write("some");
    });
    const { session, record } = openSession(port);
    const sent = [send(session, get(port)), send(session, get(port))];
    await eventually(() => sent.every(({ record }) => record.chunks.length > 0), 2000, "both bodies began");
    for (const socket of sockets) socket.destroy();
    await Promise.all(sent.map(({ record }) => record.done));
    for (const { record } of sent) {
      expect(record.closed?.code).toBe(ErrorCode.CANCEL);
      expect(record.closed?.unprocessed).toBe(false);
      expect(record.closed?.error).toBeInstanceOf(Error);
    }
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
    expect(record.closed?.error).toBeInstanceOf(Error);
    expect(session.destroyed).toBe(true);
    expect(() => send(session, get(port))).toThrow(/no more requests/);
  });

  it("answers the server's PING", async () => {
    const { port, sessions } = await nodeServer((stream) => {
      stream.respond({ ":status": 204 }, { endStream: true });
    });
    const { session } = openSession(port);
    await send(session, get(port)).record.done;
    const [serverSession] = [...sessions];
    const payload = Buffer.from("12345678");
    const echoed = await new Promise<Buffer>((resolve, reject) => {
      serverSession?.ping(payload, (error, _duration, answer) => (error ? reject(error) : resolve(answer)));
    });
    expect(echoed.equals(payload)).toBe(true);
  });

  it("closes gracefully: GOAWAY, open streams finish, then the socket ends", async () => {
    const { port, sessions } = await nodeServer((stream) => {
      stream.respond({ ":status": 200 });
      setTimeout(() => stream.end("late"), 50);
    });
    const { session, record } = openSession(port);
    const pending = send(session, get(port));
    await eventually(() => sessions.size === 1 && pending.stream.id !== undefined, 2000, "the stream went");
    const [serverSession] = [...sessions];
    const goaway = new Promise<number>((resolve) => serverSession?.on("goaway", (code) => resolve(code)));
    session.close();
    expect(() => send(session, get(port))).toThrow();
    expect(await goaway).toBe(0);
    await pending.record.done;
    expect(pending.record.body()).toBe("late");
    await eventually(() => record.closed !== undefined, 2000, "the session closed");
    expect(record.closed?.error).toBeUndefined();
    await eventually(() => sessions.size === 0, 3000, "the server saw the connection close");
  });
});

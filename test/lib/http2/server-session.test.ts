import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, Flag, FrameType, Setting } from "../../../lib/http2/frames.js";
import type { FloodKind } from "../../../lib/http2/server-session.js";
import { frame, PREFACE, rstStreamFrame } from "../../functions/node/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { runCleanups } from "./h2-kit.js";
import { GET, open, POST, RawClient, serve, settings } from "./server-kit.js";

/** Http2ServerSession against a raw client over loopback TCP: the preface, request heads, stream rules, budgets. */

afterEach(runCleanups);

function settingsOf(payload: Buffer): Map<number, number> {
  const values = new Map<number, number>();
  for (let at = 0; at < payload.length; at += 6)
    values.set(payload.readUInt16BE(at), payload.readUInt32BE(at + 2));
  return values;
}

describe("Http2ServerSession: the connection's start", () => {
  const limits = { maxConcurrentStreams: 7, initialStreamWindow: 12_345, maxHeaderListSize: 8192 };
  const expected = new Map([
    [Setting.MAX_CONCURRENT_STREAMS, 7],
    [Setting.INITIAL_WINDOW_SIZE, 12_345],
    [Setting.MAX_HEADER_LIST_SIZE, 8192],
  ]);

  it("sends SETTINGS from its options first, then a connection WINDOW_UPDATE raising the window to connectionWindow", async () => {
    const { client } = await open({ ...limits, connectionWindow: 1 << 20 });
    await client.sync();
    const [first, second] = client.frames;
    expect([first?.type, first?.flags, first?.stream]).toEqual([FrameType.SETTINGS, 0, 0]);
    expect(settingsOf(first?.payload ?? Buffer.alloc(0))).toEqual(expected);
    expect([second?.type, second?.stream, second?.payload.readUInt32BE(0)]).toEqual([
      FrameType.WINDOW_UPDATE,
      0,
      (1 << 20) - 65_535,
    ]);
  });

  it("sends no connection WINDOW_UPDATE when connectionWindow is the default 65,535", async () => {
    const { client } = await open({ ...limits, connectionWindow: 65_535 });
    await client.sync();
    expect(settingsOf(client.frames[0]?.payload ?? Buffer.alloc(0))).toEqual(expected);
    expect(client.of(FrameType.WINDOW_UPDATE)).toEqual([]);
  });

  it("acknowledges the client's SETTINGS and answers a PING with an ACK that echoes its 8 octets", async () => {
    const { client } = await open({}, undefined, [Setting.MAX_FRAME_SIZE, 32_768]);
    const payload = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
    client.send(FrameType.PING, 0, 0, payload);
    await client.until(() => client.acks(FrameType.PING) === 1, "the PING ACK");
    const ack = client.of(FrameType.PING)[0];
    expect([ack?.flags, ack?.stream, ack?.payload]).toEqual([Flag.ACK, 0, payload]);
    const settingsAcks = client.of(FrameType.SETTINGS).filter((f) => f.flags === Flag.ACK);
    expect(settingsAcks.map((f) => f.payload.length)).toEqual([0]);
  });

  it("ends a connection whose preface is an HTTP/1.1 request line with GOAWAY PROTOCOL_ERROR", async () => {
    const { port, sides } = await serve();
    const client = await RawClient.open(port, Buffer.from("GET / HTTP/1.1\r\nhost: example.test\r\n\r\n"));
    expect((await client.goaway()).code).toBe(ErrorCode.PROTOCOL_ERROR);
    await client.until(() => client.ended, "the server's FIN");
    expect(client.frames.map((f) => f.type)).toEqual([FrameType.SETTINGS, FrameType.GOAWAY]);
    expect(sides[0]?.closed?.error?.message).toMatch(/preface/);
    expect(sides[0]?.requests).toEqual([]);
  });

  it("accepts a preface split across several reads and serves the request after it", async () => {
    const { port, sides } = await serve();
    const client = await RawClient.open(port);
    await eventually(() => sides.length === 1, 2000, "the server's session");
    const side = sides[0];
    const bytes = Buffer.concat([PREFACE, settings([])]);
    const cuts = [0, 5, 17, 27, bytes.length];
    for (let i = 1; i < cuts.length; i++) {
      client.write(bytes.subarray(cuts[i - 1], cuts[i]));
      await eventually(() => side?.reads === i, 2000, `read ${i} of the preface`);
    }
    client.headers(1, GET, true);
    await eventually(() => side?.requests.length === 1, 2000, "the request");
    expect(client.goaways()).toEqual([]);
  });
});

describe("Http2ServerSession: request heads (RFC 9113 §8.1.1, §8.2, §8.3)", () => {
  const [, , , , , authority, , path] = GET;
  /** GET with the value of the pseudo-header field `name` replaced. */
  const withControl = (name: string, value: string) => GET.map((v, i) => (GET[i - 1] === name ? value : v));
  const MALFORMED: [string, string[]][] = [
    ["whose :method is missing", [":scheme", "http", ":authority", "a.test", ":path", "/"]],
    ["whose :scheme is missing", [":method", "GET", ":authority", "a.test", ":path", "/"]],
    ["whose :path is missing", [":method", "GET", ":scheme", "http", ":authority", "a.test"]],
    ["whose :path is empty", [":method", "GET", ":scheme", "http", ":path", ""]],
    ["that repeats :method", [":method", "GET", ...GET]],
    [
      "that carries :status, a response's pseudo-header",
      [...GET.slice(0, 4), ":status", "200", ...GET.slice(4)],
    ],
    ["with a pseudo-header after a regular field", [...GET.slice(0, 6), "accept", "*/*", ":path", "/"]],
    ["with an uppercase field name", [...GET, "Accept", "*/*"]],
    ["with the connection-specific field connection", [...GET, "connection", "keep-alive"]],
    ["with the connection-specific field keep-alive", [...GET, "keep-alive", "timeout=5"]],
    ["with the connection-specific field transfer-encoding", [...GET, "transfer-encoding", "chunked"]],
    ["with the connection-specific field upgrade", [...GET, "upgrade", "h2c"]],
    ["with the connection-specific field proxy-connection", [...GET, "proxy-connection", "keep-alive"]],
    ["with te: gzip (only trailers is allowed)", [...GET, "te", "gzip"]],
    ["whose field value starts with a space", [...GET, "accept", " */*"]],
    ["whose :path is absolute-form (http://other.example/x)", withControl(":path", "http://other.example/x")],
    ["whose :path is * with GET (asterisk-form is for OPTIONS only)", withControl(":path", "*")],
    ["whose :method is CONNECT (not served)", withControl(":method", "CONNECT")],
    ["whose :method holds a space", withControl(":method", "GE T")],
    ["whose :scheme is ftp", withControl(":scheme", "ftp")],
    ["whose :authority carries CR LF", withControl(":authority", "a.test\r\nx-injected: 1")],
  ];

  it.each(MALFORMED)(
    "resets a request %s with RST_STREAM PROTOCOL_ERROR, never calling onRequest",
    async (_, fields) => {
      const { client, side } = await open();
      client.headers(1, fields, true);
      await client.until(() => client.resets().has(1), "RST_STREAM on stream 1");
      await client.sync();
      expect(client.resets()).toEqual(new Map([[1, ErrorCode.PROTOCOL_ERROR]]));
      expect(side.requests).toEqual([]);
      expect(client.goaways()).toEqual([]);
    },
  );

  it("hands a well-formed request to onRequest with its control data and its fields without pseudo-headers", async () => {
    const { client, side } = await open();
    client.headers(1, [...GET, "accept", "*/*", "te", "trailers"], true);
    await eventually(() => side.requests.length === 1, 2000, "the request");
    const stream = side.requests[0];
    expect([stream?.id, stream?.method, stream?.scheme, stream?.authority, stream?.path]).toEqual([
      1,
      "GET",
      "http",
      authority,
      path,
    ]);
    expect(stream?.fields).toEqual(["accept", "*/*", "te", "trailers"]);
    expect(stream?.endedWithHead).toBe(true);
  });

  it("hands OPTIONS * (asterisk-form, RFC 9110 §9.3.7) to onRequest", async () => {
    const { client, side } = await open();
    client.headers(1, [":method", "OPTIONS", ":scheme", "http", ":authority", "a.test", ":path", "*"], true);
    await eventually(() => side.requests.length === 1, 2000, "the request");
    expect([side.requests[0]?.method, side.requests[0]?.path]).toEqual(["OPTIONS", "*"]);
    await client.sync();
    expect(client.resets()).toEqual(new Map());
  });

  it.each([
    ["less", "hello"],
    ["more", "hello, world"],
  ])(
    "resets a request whose DATA adds up to %s than its content-length with PROTOCOL_ERROR",
    async (_, body) => {
      const { client } = await open();
      client.headers(1, [...POST, "content-length", "8"], false);
      client.data(1, body, true);
      await client.until(() => client.resets().has(1), "RST_STREAM on stream 1");
      expect(client.resets().get(1)).toBe(ErrorCode.PROTOCOL_ERROR);
    },
  );
});

describe("Http2ServerSession: stream identifiers and concurrency (RFC 9113 §5.1)", () => {
  it.each([
    ["HEADERS on an even stream id", (c: RawClient) => c.headers(2, GET, true)],
    ["DATA on stream 3, never opened (idle)", (c: RawClient) => c.data(3, "x", true)],
  ])("ends the connection with GOAWAY PROTOCOL_ERROR on %s", async (_, send) => {
    const { client, side } = await open({}, (stream) => stream.respond([":status", "204"], true));
    client.headers(1, GET, true);
    await client.until(() => client.streamEnded(1), "the answer on stream 1");
    send(client);
    expect(await client.goaway()).toEqual({ last: 1, code: ErrorCode.PROTOCOL_ERROR });
    await client.until(() => client.ended, "the server's FIN");
    expect(side.closed?.error).toBeInstanceOf(Error);
  });

  it("refuses a third stream with REFUSED_STREAM under maxConcurrentStreams 2, never calling onRequest for it", async () => {
    const { client, side } = await open({ maxConcurrentStreams: 2 });
    client.write(Buffer.concat([1, 3, 5].map((id) => client.headersFrame(id, GET, true))));
    await client.until(() => client.resets().has(5), "RST_STREAM on stream 5");
    await client.sync();
    expect(client.resets()).toEqual(new Map([[5, ErrorCode.REFUSED_STREAM]]));
    expect(side.requests.map((stream) => stream.id)).toEqual([1, 3]);
    // Once one of the two closes, a new stream is taken.
    side.requests[0]?.respond([":status", "204"], true);
    await client.until(() => client.streamEnded(1), "the answer on stream 1");
    client.headers(7, GET, true);
    await eventually(() => side.requests.length === 3, 2000, "stream 7");
    expect(side.requestsClosed).toBe(1);
  });

  it("never hands out a stream opened and reset with CANCEL in the same write", async () => {
    const { client, side } = await open();
    const frames = [client.headersFrame(1, GET, true), rstStreamFrame(1, ErrorCode.CANCEL)];
    client.write(Buffer.concat([...frames, client.headersFrame(3, GET, true)]));
    await client.sync();
    expect(side.requests.map((stream) => stream.id)).toEqual([3]);
    expect(side.requestsClosed).toBe(0);
  });
});

describe("Http2ServerSession: budgets (RFC 9113 §10.5) and the idle timeout", () => {
  const ping = (i: number) => {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(i, 4);
    return frame(FrameType.PING, 0, 0, payload);
  };
  const FLOODS: {
    kind: FloodKind;
    what: string;
    budget: number;
    /** What the client's preface already spent. */
    spent: number;
    unit: (client: RawClient, i: number) => Buffer;
    handled: (client: RawClient, count: number) => Promise<void>;
  }[] = [
    {
      kind: "ping_flood",
      what: "PINGs",
      budget: 100,
      spent: 0,
      unit: (_, i) => ping(i),
      handled: (c, n) => c.until(() => c.acks(FrameType.PING) === n, `${n} PING ACKs`),
    },
    {
      kind: "settings_flood",
      what: "SETTINGS frames",
      budget: 50,
      spent: 1,
      unit: () => settings([]),
      handled: (c, n) => c.until(() => c.acks(FrameType.SETTINGS) === n + 1, `${n + 1} SETTINGS ACKs`),
    },
    {
      kind: "rapid_reset",
      what: "streams opened and reset",
      budget: 200,
      spent: 0,
      unit: (c, i) =>
        Buffer.concat([c.headersFrame(2 * i + 1, GET, true), rstStreamFrame(2 * i + 1, ErrorCode.CANCEL)]),
      handled: (c) => c.sync(),
    },
    {
      kind: "empty_frames",
      what: "frames that carry nothing (PRIORITY, an unknown type)",
      budget: 1_000,
      spent: 0,
      unit: (_, i) => (i % 2 === 0 ? frame(0x2, 0, 1, Buffer.alloc(5)) : frame(0xfa, 0, 0, Buffer.alloc(8))),
      handled: (c) => c.sync(),
    },
  ];

  it.each(FLOODS.map((row) => [row.kind, row.budget, row.what, row] as const))(
    "ends the session with GOAWAY ENHANCE_YOUR_CALM and onFlood(%s) past %d %s within 10 s",
    async (kind, budget, _, { spent, unit, handled }) => {
      const { client, side } = await open();
      const within = budget - spent;
      client.write(Buffer.concat(Array.from({ length: within }, (_, i) => unit(client, i))));
      await handled(client, within);
      expect(client.goaways()).toEqual([]);
      expect(side.floods).toEqual([]);
      client.write(unit(client, within));
      expect((await client.goaway()).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
      expect(side.floods).toEqual([kind]);
      await client.until(() => client.ended, "the server's FIN");
    },
  );

  it("closes a session with GOAWAY NO_ERROR once no stream has been open for idleTimeoutMs", async () => {
    const { client, side } = await open({ idleTimeoutMs: 200 }, (stream) =>
      stream.respond([":status", "204"], true),
    );
    client.headers(1, GET, true);
    await client.until(() => client.streamEnded(1), "the answer on stream 1");
    expect(await client.goaway()).toEqual({ last: 1, code: ErrorCode.NO_ERROR });
    await client.until(() => client.ended, "the server's FIN");
    expect(side.closed).toEqual({ error: undefined });
  });
});

import { describe, expect, it } from "vitest";
import { HpackDecoder } from "../../../../lib/http2/hpack.js";
import { closeAfterEach } from "../../harness.js";
import { until } from "../hostile-kit.js";
import { CODE, FLAG, FRAME, frame, literal, pingFrame, RawH2, requestBlock } from "./frames.js";
import { h2Request, h2Session } from "./h2-client.js";
import { routerToBackend } from "./h2c-kit.js";

/**
 * When the router's HTTP/2 streams end, with raw frames on h2c prior knowledge: a stream whose response went
 * closes whatever its request still holds or has yet to send (RFC 9113 §8.1), so answered requests never fill
 * SETTINGS_MAX_CONCURRENT_STREAMS (100), and the client still gets every byte of the response.
 */
const closing = closeAfterEach();

/** A router with app.example routed to a backend that answers at once, its request body unread. */
function routerWithEagerBackend() {
  return routerToBackend(closing, (_req, res) => res.end("early"));
}

async function rawClient(port: number): Promise<RawH2> {
  const raw = await RawH2.open(port);
  closing(Promise.resolve({ close: async () => raw.destroy() }));
  await until(() => raw.frames.some((f) => f.type === FRAME.SETTINGS), "the router's SETTINGS");
  return raw;
}

/** The first head the router sent on each stream, as a flat field list (every block decoded in order). */
function heads(raw: RawH2): Map<number, string[]> {
  const decoder = new HpackDecoder();
  const found = new Map<number, string[]>();
  for (const f of raw.frames.filter((f) => f.type === FRAME.HEADERS)) {
    const fields = decoder.decode(f.payload);
    if (!found.has(f.stream)) found.set(f.stream, fields);
  }
  return found;
}

/** The :status of each stream's response head. */
function statuses(raw: RawH2): Map<number, string | undefined> {
  return new Map([...heads(raw)].map(([id, fields]) => [id, fields[fields.indexOf(":status") + 1]]));
}

/** The router sent END_STREAM on `stream` (on HEADERS or DATA). */
function ended(raw: RawH2, stream: number): boolean {
  return raw.frames.some(
    (f) => f.stream === stream && f.type <= FRAME.HEADERS && (f.flags & FLAG.END_STREAM) !== 0,
  );
}

/** A PING answered: the router handled what came before it, and what it wrote meanwhile arrived. */
async function sync(raw: RawH2): Promise<void> {
  const acks = () => raw.frames.filter((f) => f.type === FRAME.PING && (f.flags & FLAG.ACK) !== 0).length;
  const before = acks();
  raw.write(pingFrame());
  await until(() => acks() > before, "the PING ACK");
}

describe("HTTP/2 streams the router answered", () => {
  it("answers 101 POSTs to an unrouted host, each whose body came while its stream was unread, with 404 and refuses none", async () => {
    const { router } = await routerWithEagerBackend();
    const raw = await rawClient(router.port);
    const head = Buffer.concat([
      requestBlock("nowhere.example", "/", "POST"),
      literal("content-length", "1"),
    ]);
    for (let i = 0; i < 101; i++) {
      const stream = 1 + 2 * i;
      raw.write(
        Buffer.concat([
          frame(FRAME.HEADERS, FLAG.END_HEADERS, stream, head),
          frame(FRAME.DATA, FLAG.END_STREAM, stream, Buffer.from("x")),
        ]),
      );
      await until(() => ended(raw, stream) || raw.resets().has(stream), `the answer on stream ${stream}`);
    }
    const refused = [...raw.resets()].filter(([, code]) => code === CODE.REFUSED_STREAM).map(([id]) => id);
    expect(refused).toEqual([]);
    const answers = statuses(raw);
    expect(answers.size).toBe(101);
    expect(new Set(answers.values())).toEqual(new Set(["404"]));
    expect(raw.goawayCode()).toBeUndefined();
  });

  it("answers 101 POSTs of content-length 0 from node:http2's client to a routed backend, one after another", async () => {
    const { router, backend } = await routerWithEagerBackend();
    const session = h2Session(router.port);
    closing(Promise.resolve({ close: async () => void session.destroy() }));
    const headers = { ":method": "POST", ":path": "/", ":authority": "app.example", "content-length": "0" };
    const failures: string[] = [];
    for (let i = 0; i < 101; i++) {
      const answer = await h2Request(session, headers, "").catch((error: Error) => error);
      if (answer instanceof Error) failures.push(`request ${i + 1}: ${answer.message}`);
      else if (answer.status !== 200 || answer.body !== "early")
        failures.push(`request ${i + 1}: ${answer.status}`);
    }
    expect(failures).toEqual([]);
    expect(backend.seen).toHaveLength(101);
  });

  it("sends the whole response to a client still uploading its body, then RST_STREAM NO_ERROR on that stream", async () => {
    const { router, backend } = await routerWithEagerBackend();
    const raw = await rawClient(router.port);
    raw.write(
      Buffer.concat([
        frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, requestBlock("app.example", "/up", "POST")),
        frame(FRAME.DATA, 0, 1, Buffer.from("part")),
      ]),
    );
    await until(() => raw.resets().has(1) || raw.socket.destroyed, "RST_STREAM on stream 1");
    const onStream = raw.frames.filter((f) => f.stream === 1);
    const end = onStream.findIndex((f) => (f.flags & FLAG.END_STREAM) !== 0 && f.type <= FRAME.HEADERS);
    const reset = onStream.findIndex((f) => f.type === FRAME.RST_STREAM);
    expect(statuses(raw).get(1)).toBe("200");
    const body = onStream.filter((f) => f.type === FRAME.DATA).map((f) => f.payload.toString());
    expect(body.join("")).toBe("early");
    expect(end).toBeGreaterThanOrEqual(0);
    expect(reset).toBeGreaterThan(end);
    expect(raw.resets().get(1)).toBe(CODE.NO_ERROR);
    expect(backend.seen).toHaveLength(1);
    expect(raw.goawayCode()).toBeUndefined();
  });

  it("keeps its 404 body for a client with a 0 stream window until its WINDOW_UPDATE, sends it whole with END_STREAM, and only then RST_STREAM", async () => {
    const { router } = await routerWithEagerBackend();
    const raw = await rawClient(router.port);
    const noWindow = Buffer.alloc(6);
    noWindow.writeUInt16BE(0x4, 0); // SETTINGS_INITIAL_WINDOW_SIZE = 0
    raw.write(frame(FRAME.SETTINGS, 0, 0, noWindow));
    raw.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, requestBlock("nowhere.example", "/", "POST")));
    await until(() => statuses(raw).has(1) || raw.resets().has(1), "the answer's head on stream 1");
    await sync(raw);
    expect(statuses(raw).get(1)).toBe("404");
    expect(raw.resets().get(1), "RST_STREAM on stream 1 while its body waits for a window").toBeUndefined();
    const increment = Buffer.alloc(4);
    increment.writeUInt32BE(1000);
    raw.write(frame(FRAME.WINDOW_UPDATE, 0, 1, increment));
    await until(() => ended(raw, 1) || raw.resets().has(1), "END_STREAM on stream 1");
    const onStream = raw.frames.filter((f) => f.stream === 1);
    const end = onStream.findIndex((f) => f.type === FRAME.DATA && (f.flags & FLAG.END_STREAM) !== 0);
    const reset = onStream.findIndex((f) => f.type === FRAME.RST_STREAM);
    expect(end).toBeGreaterThanOrEqual(0);
    expect(reset === -1 || reset > end).toBe(true);
    const body = onStream.filter((f) => f.type === FRAME.DATA).map((f) => f.payload.toString());
    expect(JSON.parse(body.join("")).error).toBe("no_route");
    const fields = heads(raw).get(1) ?? [];
    expect(Buffer.byteLength(body.join(""))).toBe(Number(fields[fields.indexOf("content-length") + 1]));
  });
});

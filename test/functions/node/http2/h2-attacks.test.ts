import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../../harness.js";
import { until } from "../hostile-kit.js";
import {
  CODE,
  FLAG,
  FRAME,
  frame,
  indexed,
  indexedLiteral,
  literal,
  pingFrame,
  RawH2,
  requestBlock,
  rstStreamFrame,
  settingsFrame,
} from "./frames.js";
import { h2Request, h2Session } from "./h2-client.js";
import { routerToBackend } from "./h2c-kit.js";

/**
 * The known HTTP/2 attacks, sent with raw frames on h2c prior knowledge: each is bounded (the session ends
 * with GOAWAY, or the stream is reset) and the router keeps serving other clients.
 */
const closing = closeAfterEach();
const MiB = 1024 * 1024;

/** A router with one route to a backend that answers after 200 ms (so resets come before answers). */
function routerWithSlowBackend() {
  return routerToBackend(closing, (req, res) => {
    req.resume();
    setTimeout(() => res.end("late"), 200);
  });
}

async function attacker(port: number): Promise<RawH2> {
  const raw = await RawH2.open(port);
  closing(Promise.resolve({ close: async () => raw.destroy() }));
  return raw;
}

/** Another client, well-behaved, is still answered. */
async function stillServes(port: number): Promise<void> {
  const session = h2Session(port);
  try {
    const answer = await h2Request(session, { ":path": "/", ":authority": "app.example" });
    expect(answer.status).toBe(200);
  } finally {
    session.destroy();
  }
}

const heapUsed = () => process.memoryUsage().heapUsed;

describe("HTTP/2 attacks on the router", () => {
  it("ends a rapid reset (CVE-2023-44487) with GOAWAY ENHANCE_YOUR_CALM before the backend sees the streams", async () => {
    const { router, backend } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    const frames: Buffer[] = [];
    for (let i = 0; i < 1_000; i++) {
      const stream = 1 + 2 * i;
      frames.push(
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream, requestBlock("app.example")),
      );
      frames.push(rstStreamFrame(stream, CODE.CANCEL));
    }
    raw.write(Buffer.concat(frames));
    await raw.closed;
    expect(raw.goawayCode()).toBe(CODE.ENHANCE_YOUR_CALM);
    // Streams reset in the packet that opened them are not forwarded at all.
    expect(backend.seen.length).toBeLessThan(10);
    await stillServes(router.port);
  });

  it("ends a flood of resets of streams already forwarded with GOAWAY ENHANCE_YOUR_CALM", async () => {
    const { router, backend } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    // Batches of 50 streams, each reset once the backend has its requests: 250 resets against a budget of 200.
    for (let batch = 0; batch < 5 && !raw.socket.destroyed; batch++) {
      const streams = Array.from({ length: 50 }, (_, i) => 1 + 2 * (batch * 50 + i));
      raw.write(
        Buffer.concat(
          streams.map((stream) =>
            frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream, requestBlock("app.example")),
          ),
        ),
      );
      await until(() => backend.seen.length >= (batch + 1) * 50, `batch ${batch + 1} at the backend`);
      raw.write(Buffer.concat(streams.map((stream) => rstStreamFrame(stream, CODE.CANCEL))));
    }
    await raw.closed;
    expect(raw.goawayCode()).toBe(CODE.ENHANCE_YOUR_CALM);
    await stillServes(router.port);
  });

  it("lets a client cancel some streams and ping now and then without ending its session", async () => {
    const { router } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    const frames: Buffer[] = [];
    for (let i = 0; i < 20; i++) {
      const stream = 1 + 2 * i;
      frames.push(
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream, requestBlock("app.example")),
      );
      frames.push(rstStreamFrame(stream, CODE.CANCEL), pingFrame(), settingsFrame());
    }
    frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 41, requestBlock("app.example")));
    raw.write(Buffer.concat(frames));
    await until(() => raw.answered().has(41), "the answer on stream 41");
    expect(raw.goawayCode()).toBeUndefined();
    expect(raw.socket.destroyed).toBe(false);
  });

  it("ends a CONTINUATION flood (CVE-2024-27983) with GOAWAY and holds no memory for it", async () => {
    const { router } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    const before = heapUsed();
    raw.write(frame(FRAME.HEADERS, 0, 1, requestBlock("app.example")));
    const filler = literal("x-filler", "f".repeat(16_000));
    for (let i = 0; i < 2_000 && !raw.socket.destroyed; i++) {
      raw.write(frame(FRAME.CONTINUATION, 0, 1, filler));
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await raw.closed;
    expect(raw.goawayCode()).toBeDefined();
    expect(raw.goawayCode()).not.toBe(CODE.NO_ERROR);
    expect(raw.answered().size).toBe(0);
    expect(heapUsed() - before).toBeLessThan(64 * MiB);
    await stillServes(router.port);
  });

  it("ends a SETTINGS flood with GOAWAY ENHANCE_YOUR_CALM", async () => {
    const { router } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    raw.write(Buffer.concat(Array.from({ length: 1_000 }, () => settingsFrame())));
    await raw.closed;
    expect(raw.goawayCode()).toBe(CODE.ENHANCE_YOUR_CALM);
    await stillServes(router.port);
  });

  it("ends a PING flood with GOAWAY ENHANCE_YOUR_CALM, also from a client that reads none of the ACKs", async () => {
    const { router } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    raw.socket.pause();
    raw.write(Buffer.concat(Array.from({ length: 10_000 }, () => pingFrame())));
    raw.socket.resume();
    await raw.closed;
    expect(raw.goawayCode()).toBe(CODE.ENHANCE_YOUR_CALM);
    await stillServes(router.port);
  });

  it("resets a stream whose header block decodes past the header list limit (HPACK bomb), without the memory", async () => {
    const { router, backend } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    const before = heapUsed();
    // 4 KB into the dynamic table once, then 1-byte references to it: 12 MB decoded per stream.
    const frames: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const block = Buffer.concat([
        requestBlock("app.example"),
        i === 0 ? indexedLiteral("x-bomb", "b".repeat(4_000)) : Buffer.alloc(0),
        ...Array.from({ length: 3_000 }, () => indexed(62)),
      ]);
      frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1 + 2 * i, block));
    }
    raw.write(Buffer.concat(frames));
    await until(
      () => raw.resets().size + (raw.goawayCode() === undefined ? 0 : 50) >= 50,
      "every bomb refused",
    );
    for (const code of raw.resets().values()) expect(code).toBe(CODE.ENHANCE_YOUR_CALM);
    expect(raw.answered().size).toBe(0);
    expect(backend.seen).toHaveLength(0);
    expect(heapUsed() - before).toBeLessThan(64 * MiB);
    await stillServes(router.port);
  });

  it("refuses streams past the concurrency limit and ends a session that keeps opening them", async () => {
    const { router, backend } = await routerWithSlowBackend();
    const raw = await attacker(router.port);
    await until(() => raw.frames.some((f) => f.type === FRAME.SETTINGS), "the router's SETTINGS");
    // POSTs whose bodies never come: each stream stays open.
    const frames: Buffer[] = [];
    for (let i = 0; i < 400; i++) {
      frames.push(
        frame(FRAME.HEADERS, FLAG.END_HEADERS, 1 + 2 * i, requestBlock("app.example", "/", "POST")),
      );
    }
    raw.write(Buffer.concat(frames));
    await raw.closed;
    expect(raw.goawayCode()).toBeDefined();
    expect(backend.seen.length).toBeLessThanOrEqual(100);
    await stillServes(router.port);
  });
});

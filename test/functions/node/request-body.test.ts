import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type BodyAttempt, RequestBody } from "../../../functions/node/request-body.js";
import type { BodySink, BodySource } from "../../../lib/http-exchange.js";

const SETTINGS = { tryTimeoutMs: 60_000, clientBodyIdleTimeoutMs: 60_000 };

/** An attempt that records what the body told it. */
function attempt(): BodyAttempt & { told: string[] } {
  const told: string[] = [];
  return {
    told,
    cut: (cause) => told.push(`cut ${cause}`),
    bodyStarted: () => told.push("started"),
    bodySent: () => told.push("sent"),
    clientLeft: () => told.push("left"),
  };
}

/** A sink with room for `room` chunks; more only after `makeRoom`. */
function sink(room: number) {
  const got: string[] = [];
  let left = room;
  let source: BodySource | undefined;
  let told: () => void = () => undefined;
  /** Settles when the source says the body ended. */
  const whole = new Promise<void>((resolve) => {
    told = resolve;
  });
  const heard: BodySink & { got: string[]; ended: boolean } = {
    got,
    ended: false,
    bodyData(chunk) {
      got.push(chunk.toString());
      left--;
      return left > 0;
    },
    bodyEnd() {
      heard.ended = true;
      told();
    },
    bodyFailed() {},
  };
  return {
    heard,
    whole,
    start(body: BodySource) {
      source = body;
      body.start(heard);
    },
    makeRoom(more: number) {
      left = more;
      source?.resume();
    },
  };
}

/** A client body sent whole in `chunks`, read by a first attempt that took all of it. */
async function readWhole(chunks: string[]) {
  const incoming = new PassThrough();
  const body = new RequestBody(incoming, SETTINGS);
  const first = attempt();
  const source = body.forAttempt(first);
  const taker = sink(Number.POSITIVE_INFINITY);
  taker.start(source);
  for (const chunk of chunks) incoming.write(chunk);
  incoming.end();
  await taker.whole;
  return { body, source, first, taker };
}

describe("a request body given to its attempts (request-body.ts)", () => {
  it("gives a first attempt every chunk as it comes, then tells it the whole body was sent", async () => {
    const { taker, first } = await readWhole(["a", "b", "c"]);
    expect([taker.heard.got, taker.heard.ended, first.told]).toEqual([
      ["a", "b", "c"],
      true,
      ["started", "sent"],
    ]);
  });

  it("replays the kept chunks only while the sink has room, the rest once it makes more", async () => {
    const { source } = await readWhole(["a", "b", "c", "d", "e"]);
    const replay = source.replay?.();
    if (replay === undefined) throw new Error("a body within the bound is kept whole");
    const full = sink(2);
    full.start(replay);
    expect([full.heard.got, full.heard.ended]).toEqual([["a", "b"], false]);
    full.makeRoom(10);
    expect([full.heard.got, full.heard.ended]).toEqual([["a", "b", "c", "d", "e"], true]);
  });

  it("has no replay once the body outgrew the 64 KiB it keeps", async () => {
    const { source } = await readWhole(["x".repeat(40_000), "y".repeat(40_000)]);
    expect(source.replay?.()).toBeUndefined();
  });
});

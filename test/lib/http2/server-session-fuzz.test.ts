import { connect, createServer, type Server } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BodyListener } from "../../../lib/http2/api.js";
import { ErrorCode } from "../../../lib/http2/frames.js";
import type { ServerSessionOptions, ServerStream } from "../../../lib/http2/server-session.js";
import { PREFACE, settingsFrame } from "../../functions/node/http2/frames.js";
import {
  announcedMaxFrameSize,
  clientFramesArb,
  type FrameSpec,
  frameBytes,
  serverFrameProblems,
} from "./fuzz-frames.js";
import { ServerSide } from "./server-kit.js";

/**
 * Random but structured client input (fuzz-frames.ts) against a real Http2ServerSession over loopback TCP:
 * whatever the client sends and however it leaves, no defect surfaces (onFailure, an uncaught exception),
 * every stream and the session close exactly once, and every frame the server sends is well formed.
 */

/** H2_FUZZ_RUNS for a longer soak; H2_FUZZ_SEED (and H2_FUZZ_PATH) replay a failure fast-check reported. */
const NUM_RUNS = Number(process.env.H2_FUZZ_RUNS ?? 300);
const REPLAY = process.env.H2_FUZZ_SEED
  ? { seed: Number(process.env.H2_FUZZ_SEED), path: process.env.H2_FUZZ_PATH }
  : {};
const SETTLE_MS = 2000;

/**
 * What onRequest does with a stream: answer at once (plain, with trailers, with a body larger than the windows,
 * with a head over 16 KiB), read the body and answer on its end, answer on a later turn, or reset.
 */
type Mode = "now" | "trailers" | "big-body" | "big-head" | "body" | "later" | "reset";
const MODES: readonly Mode[] = ["now", "trailers", "big-body", "big-head", "body", "later", "reset"];

interface Case {
  /** The server's limits: few streams (REFUSED_STREAM), small windows and head lists, an idle timer. */
  readonly options: ServerSessionOptions;
  /** A well-formed empty SETTINGS first, as a client's preface has (without it the session ends at once). */
  readonly settingsFirst: boolean;
  readonly frames: FrameSpec[];
  readonly cuts: number[];
  readonly modes: Mode[];
  /** Wait until the server has read everything (and a turn passed) before closing: its answers go out. */
  readonly waitForServer: boolean;
  /** Then this long more before closing (past an idle timeout). */
  readonly lingerMs: number;
  readonly close: "end" | "destroy";
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  options: fc.record({
    maxConcurrentStreams: fc.constantFrom(1, 2, 100),
    maxHeaderListSize: fc.constantFrom(200, 16 * 1024),
    initialStreamWindow: fc.constantFrom(1000, 65_535, 1 << 20),
    connectionWindow: fc.constantFrom(65_535, 1 << 20),
    idleTimeoutMs: fc.constantFrom(0, 0, 15),
  }),
  settingsFirst: fc.oneof(
    { weight: 19, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  frames: clientFramesArb,
  cuts: fc.array(fc.nat(), { maxLength: 4, size: "max" }),
  modes: fc.array(fc.constantFrom(...MODES), { minLength: 1, maxLength: 3 }),
  waitForServer: fc.oneof(
    { weight: 4, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  lingerMs: fc.constantFrom(0, 0, 0, 30),
  close: fc.constantFrom("end" as const, "destroy" as const),
});

/** A stream's own listener: counts its onClose and names any callback after it. */
class Listener implements BodyListener {
  closes = 0;
  readonly late: string[] = [];
  constructor(readonly onEnded: () => void = () => undefined) {}
  #heard(what: string): void {
    if (this.closes > 0) this.late.push(what);
  }
  onData(): void {
    this.#heard("onData");
  }
  onTrailers(): void {
    this.#heard("onTrailers");
  }
  onEnd(): void {
    this.#heard("onEnd");
    this.onEnded();
  }
  onDrain(): void {
    this.#heard("onDrain");
  }
  onClose(): void {
    this.#heard("onClose");
    this.closes++;
  }
}

/** One connection's run: the modes its streams take in turn, their listeners, and the server's side. */
class Run {
  side: ServerSide | undefined;
  readonly listeners: Listener[] = [];
  constructor(
    readonly modes: readonly Mode[],
    readonly options: ServerSessionOptions,
  ) {}

  readonly onRequest = (stream: ServerStream): void => {
    const mode = this.modes[this.listeners.length % this.modes.length] as Mode;
    const answer = () => {
      if (stream.isClosed) return;
      const big = mode === "big-head" ? ["x-big", "b".repeat(20_000)] : [];
      stream.respond([":status", "200", ...big], false);
      stream.write(Buffer.alloc(mode === "big-body" ? 100_000 : 2, 0x6f));
      stream.end(mode === "trailers" ? ["x-trailer", "1"] : undefined);
    };
    const listener = new Listener(mode === "body" ? answer : undefined);
    this.listeners.push(listener);
    stream.listen(listener);
    if (mode === "body") stream.resume();
    else if (mode === "later") setImmediate(answer);
    else if (mode === "reset") stream.reset(ErrorCode.CANCEL);
    else answer();
  };
}

const processErrors: unknown[] = [];
const onProcessError = (error: unknown) => {
  processErrors.push(error);
};
let server: Server;
let port = 0;
let nextRun: Run | undefined;

beforeAll(async () => {
  process.on("uncaughtException", onProcessError).on("unhandledRejection", onProcessError);
  server = createServer((socket) => {
    const run = nextRun;
    nextRun = undefined;
    if (run === undefined) socket.destroy();
    else run.side = new ServerSide(socket, run.options, run.onRequest);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  process.off("uncaughtException", onProcessError).off("unhandledRejection", onProcessError);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Polls `condition` (every 2 ms, `ms` at most): whether it came to hold. */
async function until(condition: () => boolean, ms = SETTLE_MS): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return true;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The client's bytes in 1..5 writes, cut where `cuts` say. */
function pieces(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const bounds = [0, ...at, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end));
}

/** One connection through the case; what broke, if anything. */
async function exercise(c: Case): Promise<string[]> {
  const lead = c.settingsFirst ? [PREFACE, settingsFrame()] : [PREFACE];
  const bytes = Buffer.concat([...lead, ...c.frames.map(frameBytes)]);
  const run = new Run(c.modes, c.options);
  nextRun = run;
  const socket = connect({ host: "127.0.0.1", port, noDelay: true });
  const received: Buffer[] = [];
  let clientClosed = false;
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  socket.on("error", () => undefined);
  socket.on("close", () => {
    clientClosed = true;
  });
  try {
    await until(() => run.side !== undefined || clientClosed);
    const side = run.side;
    if (side === undefined) return ["the server never took the connection"];
    for (const piece of pieces(bytes, c.cuts)) {
      if (!socket.destroyed && socket.writable) socket.write(piece);
      await turn();
    }
    if (c.waitForServer) {
      await until(
        () => side.session.socket.bytesRead >= bytes.length || side.closed !== undefined || clientClosed,
      );
      await turn();
      await turn();
    }
    if (c.lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, c.lingerMs));
    if (c.close === "end") socket.end();
    else socket.destroy();
    const problems: string[] = [];
    if (!(await until(() => clientClosed))) problems.push("the client's socket never closed");
    const settled = () =>
      side.closed !== undefined &&
      side.requestsClosed === side.requests.length &&
      run.listeners.every((l) => l.closes > 0);
    if (!(await until(settled))) {
      const open = run.listeners.filter((l) => l.closes === 0).length;
      problems.push(
        `not settled: session closed ${side.closed !== undefined}, requests ${side.requests.length}, ` +
          `requestsClosed ${side.requestsClosed}, streams without onClose ${open}`,
      );
    }
    await turn();
    for (const failure of side.failures)
      problems.push(`onFailure: ${failure instanceof Error ? failure.stack : String(failure)}`);
    for (const error of processErrors.splice(0))
      problems.push(`uncaught: ${error instanceof Error ? error.stack : String(error)}`);
    if (side.requestsClosed !== side.requests.length)
      problems.push(`onRequestClosed ${side.requestsClosed} times for ${side.requests.length} requests`);
    run.listeners.forEach((l, i) => {
      if (l.closes !== 1) problems.push(`stream ${i}'s listener heard onClose ${l.closes} times`);
      if (l.late.length > 0) problems.push(`stream ${i}'s listener heard ${l.late} after onClose`);
    });
    problems.push(...serverFrameProblems(Buffer.concat(received), announcedMaxFrameSize(c.frames)));
    return problems;
  } finally {
    socket.destroy();
  }
}

describe("Http2ServerSession under random client input", () => {
  it(
    `keeps its invariants over ${NUM_RUNS} random connections`,
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const problems = await exercise(c);
          expect(problems, problems.join("\n")).toEqual([]);
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
    },
    60_000 + NUM_RUNS * 20,
  );
});

import { afterEach, describe, expect, it } from "vitest";
import type { ExchangeHandler } from "../../../lib/http-exchange.js";
import { OriginPool } from "../../../lib/http1/origin-pool.js";
import { ResponseParser } from "../../../lib/http1/response-parser.js";
import { httpBackend, TEST_POOL_SETTINGS, type TestBackend } from "./client-kit.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** 2 MiB in which every byte says where it is, so a piece overwritten by a later read would show. */
const BODY = Buffer.alloc(2 * 1024 * 1024);
for (let i = 0; i < BODY.length; i++) BODY[i] = (i * 7 + (i >> 16)) % 251;

/** A backend answering BODY in pieces, so the client reads it over many reads. */
async function bodyBackend(): Promise<TestBackend> {
  const b = await httpBackend((_req, res) => {
    res.writeHead(200, { "content-length": String(BODY.length) });
    let at = 0;
    const next = () => {
      if (at >= BODY.length) return void res.end();
      const piece = BODY.subarray(at, at + 40 * 1024);
      at += piece.length;
      if (res.write(piece)) setImmediate(next);
      else res.once("drain", next);
    };
    next();
  });
  cleanups.push(() => b.close());
  return b;
}

/** Fetches the body through a fresh pool, each chunk handed to `handler`. */
function fetchBody(b: TestBackend, handler: Pick<ExchangeHandler, "onData" | "holdsChunk">): Promise<void> {
  const pool = new OriginPool("127.0.0.1", b.port, TEST_POOL_SETTINGS);
  cleanups.push(async () => pool.destroy());
  return new Promise((resolve, reject) => {
    pool.dispatch(
      {
        method: "GET",
        path: "/",
        headers: ["host", "backend.test"],
        body: null,
        contentLength: undefined,
        transferCodings: undefined,
      },
      { onStart: () => undefined, onHead: () => undefined, ...handler, onComplete: resolve, onError: reject },
    );
  });
}

describe("the connection's read buffer", () => {
  it("reads a long body into one buffer, again and again, while the handler holds none of its chunks", async () => {
    const b = await bodyBackend();
    const copies: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    await fetchBody(b, {
      onData: (chunk) => {
        copies.push(Buffer.from(chunk));
        buffers.add(chunk.buffer);
        return true;
      },
      holdsChunk: () => false,
    });
    expect(Buffer.concat(copies).equals(BODY)).toBe(true);
    expect(copies.length).toBeGreaterThan(2);
    expect(buffers.size).toBe(1);
  });

  it("hands a handler that keeps its chunks pieces that stay as they came", async () => {
    const b = await bodyBackend();
    const kept: Buffer[] = [];
    await fetchBody(b, {
      onData: (chunk) => {
        kept.push(chunk);
        return true;
      },
    });
    expect(kept.length).toBeGreaterThan(2);
    expect(Buffer.concat(kept).equals(BODY)).toBe(true);
  });

  it("reads into a fresh buffer after a read whose chunks the handler says it holds", async () => {
    const b = await bodyBackend();
    const kept: Buffer[] = [];
    await fetchBody(b, {
      onData: (chunk) => {
        kept.push(chunk);
        return true;
      },
      holdsChunk: () => true,
    });
    expect(Buffer.concat(kept).equals(BODY)).toBe(true);
    expect(new Set(kept.map((chunk) => chunk.buffer)).size).toBe(kept.length);
  });

  it("leaves the parser's held bytes intact when the buffer it was given is read into again", () => {
    let room = true;
    const heard = { fields: [] as string[], body: "", ends: [] as boolean[] };
    const parser = new ResponseParser({
      onResponseHead: ({ fields }) => {
        heard.fields = fields;
      },
      onResponseData: (chunk) => {
        heard.body += chunk.toString("latin1");
        return room;
      },
      onResponseEnd: (reusable) => heard.ends.push(reusable),
    });
    parser.expect(false);
    // One buffer, filled read after read, as the connection fills its own.
    const buffer = Buffer.alloc(64);
    const read = (text: string) => {
      buffer.fill(0x21);
      parser.execute(buffer.subarray(0, buffer.write(text, "latin1")));
    };
    // A head cut in two, a chunk-size line cut in two, then bytes held while paused.
    read("HTTP/1.1 200 OK\r\ntransfer-enc");
    read("oding: chunked\r\n\r\n1");
    read("0\r\n0123456789abcdef\r\n");
    room = false;
    read("6\r\nghijkl\r\n");
    read("3\r\nmno\r\n0\r\n\r\n");
    room = true;
    parser.resume();
    expect([heard.fields, heard.body, heard.ends]).toEqual([
      ["transfer-encoding", "chunked"],
      "0123456789abcdefghijklmno",
      [true],
    ]);
  });
});

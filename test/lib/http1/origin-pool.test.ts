import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { OriginPool, type PoolSettings } from "../../../lib/http1/origin-pool.js";
import {
  httpBackend,
  rawBackend,
  sendVia,
  TEST_POOL_SETTINGS,
  type TestBackend,
  until,
} from "./client-kit.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A pool of connections to `b`, destroyed after the test. */
function poolTo(b: TestBackend, settings: Partial<PoolSettings> = {}): OriginPool {
  const created = new OriginPool("127.0.0.1", b.port, { ...TEST_POOL_SETTINGS, ...settings });
  cleanups.push(async () => created.destroy());
  return created;
}

async function backend(started: Promise<TestBackend>): Promise<TestBackend> {
  const b = await started;
  cleanups.push(() => b.close());
  return b;
}

/**
 * Two requests through a fresh pool, the second once the first's connection left the pool (waiting for that
 * rather than a fixed time: a stalled test would reuse it before its close or stray bytes were read): both
 * answered `body`, each on a connection of its own.
 */
async function expectNoReuse(b: TestBackend, body: string): Promise<void> {
  const pool = poolTo(b);
  expect((await sendVia(pool).done).body).toBe(body);
  await until(async () => pool.open === 0, "the connection to go");
  expect((await sendVia(pool).done).body).toBe(body);
  expect(b.connections).toBe(2);
}

/** A chunk large enough to be handed on alone (small ones read together are handed on together). */
const KIB = "k".repeat(1024);

const hello = (length = 5) => `HTTP/1.1 200 OK\r\ncontent-length: ${length}\r\n\r\n${"h".repeat(length)}`;

describe("the HTTP/1.1 client's pool of connections to one server", () => {
  it("carries requests one after another on one kept-alive connection", async () => {
    const b = await backend(httpBackend((_req, res) => res.end("ok")));
    const c = poolTo(b);
    for (let i = 0; i < 3; i++) expect((await sendVia(c).done).body).toBe("ok");
    expect(b.connections).toBe(1);
  });

  it("opens no more than connectionsPerBackend connections; the other requests wait in line", async () => {
    const b = await backend(httpBackend((_req, res) => setTimeout(() => res.end("ok"), 30)));
    const c = poolTo(b, { connections: 2 });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => sendVia(c).done));
    expect(outcomes.map((o) => o.body)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(b.connections).toBe(2);
  });

  it("sends a body with a Content-Length as it is, and one without chunked", async () => {
    const b = await backend(
      httpBackend((req, res) => {
        let body = "";
        req.setEncoding("latin1");
        req.on("data", (chunk: string) => (body += chunk));
        req.on("end", () => res.end(`${req.headers["transfer-encoding"] ?? "length"}:${body}`));
      }),
    );
    const c = poolTo(b);
    const sized = sendVia(c, {
      method: "POST",
      headers: ["host", "h"],
      contentLength: 6,
      body: Readable.from([Buffer.from("ab"), Buffer.from("cdef")]),
    });
    expect((await sized.done).body).toBe("length:abcdef");
    const streamed = sendVia(c, {
      method: "POST",
      headers: ["host", "h"],
      body: Readable.from([Buffer.from("x".repeat(70_000)), Buffer.from("yz")]),
    });
    expect((await streamed.done).body).toBe(`chunked:${"x".repeat(70_000)}yz`);
  });

  it("opens a new connection once the backend closed the idle one", async () => {
    const b = await backend(httpBackend((_req, res) => res.end("ok"), 50));
    await expectNoReuse(b, "ok");
  });

  it("keeps no connection whose backend hints at a Keep-Alive timeout of a second or less", async () => {
    const b = await backend(
      rawBackend((socket) =>
        socket.write("HTTP/1.1 200 OK\r\nkeep-alive: timeout=1\r\ncontent-length: 0\r\n\r\n"),
      ),
    );
    await expectNoReuse(b, "");
  });

  it("reports a body cut short by the backend as an error after the head", async () => {
    const b = await backend(
      rawBackend((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")),
    );
    const outcome = await sendVia(poolTo(b)).done;
    expect([outcome.status, outcome.body, outcome.error?.message]).toEqual([
      200,
      "abc",
      "backend closed the connection mid-response",
    ]);
  });

  it("stops reading while the handler takes no more, and relays the whole body after resume", async () => {
    const size = 4 * 1024 * 1024;
    const b = await backend(httpBackend((_req, res) => res.end(Buffer.alloc(size, 97))));
    let room = false;
    const sent = sendVia(poolTo(b), {}, () => room);
    await until(async () => sent.outcome.body.length > 0, "the first chunk");
    // The same body read whole on another connection: time enough for this one to have read it too.
    expect((await sendVia(poolTo(b)).done).body.length).toBe(size);
    expect(sent.outcome.body.length).toBeLessThan(size / 2);
    room = true;
    sent.control().resume();
    expect((await sent.done).body.length).toBe(size);
  });

  it("fails the request, never throwing from resume, when what was held while paused is malformed", async () => {
    const b = await backend(
      rawBackend((socket) =>
        socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n400\r\n${KIB}\r\nZZ\r\n`),
      ),
    );
    let room = false;
    const sent = sendVia(poolTo(b), {}, () => room);
    await until(async () => sent.outcome.body === KIB, "the first chunk");
    room = true;
    expect(() => sent.control().resume()).not.toThrow();
    expect((await sent.done).error?.name).toBe("MalformedResponseError");
  });

  it("relays the whole response when the backend closed while reading was paused", async () => {
    let closed = false;
    const b = await backend(
      rawBackend((socket) =>
        socket.end(
          `HTTP/1.1 200 OK\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n400\r\n${KIB}\r\n2\r\ncd\r\n0\r\n\r\n`,
          () => {
            closed = true;
          },
        ),
      ),
    );
    let room = false;
    const sent = sendVia(poolTo(b), {}, () => room);
    await until(async () => sent.outcome.body === KIB, "the first chunk");
    // The backend's end (its FIN) went out; the paused connection reads it, and the rest, once resumed.
    await until(async () => closed, "the backend to close its side");
    room = true;
    sent.control().resume();
    const outcome = await sent.done;
    expect([outcome.body, outcome.error]).toEqual([`${KIB}cd`, undefined]);
  });

  it("runs no body timeout while reading is paused for the handler", async () => {
    const b = await backend(
      rawBackend((socket) => socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab`)),
    );
    let room = false;
    const sent = sendVia(poolTo(b, { bodyTimeoutMs: 150 }), {}, () => room);
    await until(async () => sent.outcome.body === "ab", "the first bytes");
    // The same stall, not paused, on another connection started after: its body timeout fired, and this one's
    // would have fired no later.
    const control = await sendVia(poolTo(b, { bodyTimeoutMs: 150 })).done;
    expect(control.error?.code).toBe("UPSTREAM_BODY_TIMEOUT");
    expect(sent.outcome.error).toBeUndefined();
    room = true;
    sent.control().resume();
    expect((await sent.done).error?.code).toBe("UPSTREAM_BODY_TIMEOUT");
  });

  it("fails a body delimited by the close when the backend resets instead of closing", async () => {
    const b = await backend(
      rawBackend((socket) => {
        socket.write("HTTP/1.1 200 OK\r\n\r\nhello", () => setTimeout(() => socket.resetAndDestroy(), 20));
      }),
    );
    const outcome = await sendVia(poolTo(b)).done;
    expect([outcome.status, outcome.body, outcome.error?.message]).toEqual([200, "hello", "read ECONNRESET"]);
  });

  it("sends Content-Length: 0 for a POST without content", async () => {
    const b = await backend(rawBackend((socket) => socket.write(hello())));
    await sendVia(poolTo(b), { method: "POST" }).done;
    expect(b.heads[0]).toMatch(/\r\ncontent-length: 0$/);
  });

  it("fails a request aborted while it waits for a connection, which is never sent", async () => {
    const b = await backend(rawBackend((socket) => setTimeout(() => socket.write(hello()), 100)));
    const c = poolTo(b, { connections: 1 });
    const first = sendVia(c);
    const second = sendVia(c);
    second.control().abort(new Error("cut"));
    expect((await second.done).error?.message).toBe("cut");
    expect((await first.done).body).toBe("hhhhh");
    expect(b.heads).toHaveLength(1);
  });

  it("closes the connection of a request aborted mid-response and fails it once", async () => {
    const b = await backend(
      rawBackend((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nab")),
    );
    const c = poolTo(b);
    const sent = sendVia(c);
    await until(async () => sent.outcome.body === "ab", "the first bytes");
    sent.control().abort(new Error("client gone"));
    sent.control().abort(new Error("again"));
    expect((await sent.done).error?.message).toBe("client gone");
    await until(async () => c.open === 0, "the connection to close");
  });

  it("does not reuse a connection the backend answered before it read the whole body", async () => {
    const b = await backend(
      httpBackend((_req, res) => res.writeHead(413, { connection: "keep-alive" }).end("no")),
    );
    const c = poolTo(b);
    const body = new Readable({ read() {} });
    body.push("partial");
    const sent = sendVia(c, {
      method: "POST",
      headers: ["host", "h"],
      contentLength: 100,
      body,
    });
    expect(await sent.done).toMatchObject({ status: 413, body: "no" });
    expect((await sendVia(c).done).status).toBe(413);
    expect(b.connections).toBe(2);
  });

  it.each([
    ["bytes past the end of the response", (length: number) => `${hello(length)}HTTP/1.1 200 OK\r\n\r\n`],
    ["a 408 on the connection once idle", (length: number) => `${hello(length)}`],
  ])("does not reuse a connection after %s", async (what, reply) => {
    const b = await backend(
      rawBackend((socket) => {
        socket.write(reply(2));
        if (what.startsWith("a 408"))
          setTimeout(() => socket.write("HTTP/1.1 408 Request Timeout\r\n\r\n"), 20);
      }),
    );
    await expectNoReuse(b, "hh");
  });

  it("fails a response whose body stalls for longer than bodyTimeoutMs", async () => {
    const b = await backend(
      rawBackend((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nab")),
    );
    const outcome = await sendVia(poolTo(b, { bodyTimeoutMs: 150 })).done;
    expect([outcome.status, outcome.error?.code]).toEqual([200, "UPSTREAM_BODY_TIMEOUT"]);
  });

  it("refuses a field value with a line break before writing anything, and serves the next request", async () => {
    const b = await backend(rawBackend((socket) => socket.write(hello())));
    const c = poolTo(b);
    const bad = await sendVia(c, { headers: ["host", "h", "x-a", "1\r\nx-injected: 1"] }).done;
    expect(bad.error?.name).toBe("InvalidRequestHeadError");
    expect((await sendVia(c).done).body).toBe("hhhhh");
    expect(b.heads.map((head) => head.includes("x-injected"))).toEqual([false]);
  });

  it("lets requests under way finish on close, and fails them on destroy", async () => {
    const b = await backend(rawBackend((socket) => setTimeout(() => socket.write(hello()), 50)));
    const closing = poolTo(b);
    const finishing = sendVia(closing);
    await until(async () => b.heads.length === 1, "the request to arrive");
    await closing.close();
    expect((await finishing.done).body).toBe("hhhhh");
    const destroyed = poolTo(b);
    const failing = sendVia(destroyed);
    await until(async () => b.heads.length === 2, "the request to arrive");
    destroyed.destroy();
    expect((await failing.done).error).toBeDefined();
  });
});

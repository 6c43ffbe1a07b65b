import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { OriginPool, type PoolSettings } from "../../../lib/http1/origin-pool.js";
import { rawBackend, sendVia, TEST_POOL_SETTINGS, type TestBackend, until } from "./client-kit.js";

/** One connection's life: how its request body is counted, what bounds the wait, who closed it and why. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function backend(started: Promise<TestBackend>): Promise<TestBackend> {
  const b = await started;
  cleanups.push(() => b.close());
  return b;
}

function poolTo(b: TestBackend, settings: Partial<PoolSettings> = {}): OriginPool {
  const created = new OriginPool("127.0.0.1", b.port, { ...TEST_POOL_SETTINGS, ...settings });
  cleanups.push(async () => created.destroy());
  return created;
}

const hello = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";

/** A backend on one connection that answers `hello` once `bodyBytes` bytes followed the request's head. */
async function answersAfterBody(bodyBytes: number): Promise<TestBackend> {
  let started: TestBackend | undefined;
  started = await rawBackend((socket) => {
    const check = () => {
      const received = started?.received[0] ?? "";
      if (received.length - received.indexOf("\r\n\r\n") - 4 < bodyBytes) return;
      socket.off("data", check);
      socket.write(hello);
    };
    socket.on("data", check);
    check();
  });
  return started;
}

/** Requests on each connection, counted from 1; `answer` says what the backend does with each. */
function backendBy(answer: (socket: Socket, nth: number) => void): Promise<TestBackend> {
  const counts = new WeakMap<Socket, number>();
  return rawBackend((socket) => {
    const nth = (counts.get(socket) ?? 0) + 1;
    counts.set(socket, nth);
    answer(socket, nth);
  });
}

/** Answers the first request on every connection; closes (or resets) the connection on the second. */
const idleCloser = (how: "close" | "reset") =>
  backendBy((socket, nth) => {
    if (nth === 1) socket.write(hello);
    else if (how === "close") socket.end();
    else socket.resetAndDestroy();
  });

describe("a connection of the HTTP/1.1 client", () => {
  it("never sends more body than the declared Content-Length, fails the request and closes", async () => {
    const b = await backend(answersAfterBody(3));
    const pool = poolTo(b);
    const body = Readable.from([Buffer.from("x".repeat(40))]);
    const outcome = await sendVia(pool, { method: "POST", contentLength: 3, body }).done;
    expect(outcome.error?.name).toBe("BodyLengthError");
    await until(async () => pool.open === 0 && b.open() === 0, "the connection to close on both ends");
    expect(b.received.join("")).not.toContain("x");
  });

  it("fails a request whose body ends short of its Content-Length, and closes its connection", async () => {
    const b = await backend(answersAfterBody(10));
    const pool = poolTo(b);
    const body = Readable.from([Buffer.from("abc")]);
    const outcome = await sendVia(pool, { method: "POST", contentLength: 10, body }).done;
    expect(outcome.error?.name).toBe("BodyLengthError");
    await until(async () => pool.open === 0, "the connection to close");
  });

  it("fails a request whose response head does not come within responseHeadTimeoutMs", async () => {
    const b = await backend(rawBackend(() => undefined));
    const outcome = await sendVia(poolTo(b, { responseHeadTimeoutMs: 200 })).done;
    expect(outcome.error?.code).toBe("UPSTREAM_HEAD_TIMEOUT");
  });

  it("starts the wait for the response head only once the whole body was sent", async () => {
    const b = await backend(answersAfterBody(4));
    const body = new Readable({ read() {} });
    body.push("ab");
    setTimeout(() => {
      body.push("cd");
      body.push(null);
    }, 600);
    const pool = poolTo(b, { responseHeadTimeoutMs: 200 });
    const outcome = await sendVia(pool, { method: "POST", contentLength: 4, body }).done;
    expect([outcome.status, outcome.body, outcome.error]).toEqual([200, "hello", undefined]);
  });

  it("reports its own destroy as a local abort, not as the server closing", async () => {
    const b = await backend(rawBackend(() => undefined));
    const pool = poolTo(b);
    const sent = sendVia(pool);
    await until(async () => b.heads.length === 1, "the request to arrive");
    pool.destroy();
    const { error } = await sent.done;
    expect([error?.name, error?.code]).toEqual(["LocalAbortError", "UPSTREAM_LOCAL_ABORT"]);
  });

  it.each(["close", "reset"] as const)(
    "sends a GET again on a fresh connection when the server answers its reuse with a %s",
    async (how) => {
      const b = await backend(idleCloser(how));
      const pool = poolTo(b);
      expect((await sendVia(pool).done).body).toBe("hello");
      const again = await sendVia(pool).done;
      expect([again.status, again.body, again.error]).toEqual([200, "hello", undefined]);
      expect(b.connections).toBe(2);
    },
  );

  it.each<[string, Parameters<typeof sendVia>[1]]>([
    ["a POST", { method: "POST" }],
    ["a request with a body", { method: "PUT", contentLength: 2, body: Readable.from([Buffer.from("ab")]) }],
  ])(
    "fails %s the server closed a reused connection under, never sending it twice",
    async (_what, request) => {
      const b = await backend(idleCloser("close"));
      const pool = poolTo(b);
      expect((await sendVia(pool).done).body).toBe("hello");
      const failed = await sendVia(pool, request).done;
      expect(failed.error?.name).toBe("ServerClosedError");
      expect(b.heads).toHaveLength(2);
    },
  );

  it("fails a GET whose first connection closes before answering, never sending it twice", async () => {
    const b = await backend(backendBy((socket) => socket.end()));
    const failed = await sendVia(poolTo(b)).done;
    expect(failed.error?.name).toBe("ServerClosedError");
    expect(b.heads).toHaveLength(1);
  });

  it("fails a GET on a reused connection once bytes of its answer came, never sending it twice", async () => {
    const b = await backend(
      backendBy((socket, nth) => {
        if (nth === 1) socket.write(hello);
        else socket.end("HTTP/1.1 200 OK\r\ncontent-le");
      }),
    );
    const pool = poolTo(b);
    expect((await sendVia(pool).done).body).toBe("hello");
    const failed = await sendVia(pool).done;
    expect(failed.error?.name).toBe("MalformedResponseError");
    expect(b.heads).toHaveLength(2);
  });
});

import { randomBytes } from "node:crypto";
import { createServer as createHttpServer } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNRECOGNIZED_NAME_ALERT } from "../../../functions/core/tls/client-hello.js";
import { type HttpsListener, startHttpsListener } from "../../../functions/node/tls/https-listener.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { clientHelloBytes } from "../../support/client-hello.js";

/**
 * The HTTPS listener's first read, with raw sockets: what a client that is not a TLS client, or a broken or
 * slow one, gets before any TLS starts. Every such connection is closed without an answer and counted as a
 * failed handshake; only a whole, well-formed ClientHello is answered.
 */
const HELLO_TIMEOUT_MS = 1_000;

describe("the TLS ports' ClientHello read", () => {
  let listener: HttpsListener;
  const httpServer = createHttpServer();

  beforeAll(async () => {
    listener = await startHttpsListener({
      reader: new MemoryStore(),
      storeKey: randomBytes(32),
      httpServer,
      port: 0,
      host: "127.0.0.1",
      logger: silentLogger,
      handshakeTimeoutMs: HELLO_TIMEOUT_MS,
    });
  });
  afterAll(async () => {
    await listener?.close();
  });

  /** Opens a raw connection, writes `chunks` (pausing `gapMs` between them), and reports what came back. */
  async function exchange(chunks: readonly Buffer[], gapMs = 0, closeAfterWrite = false) {
    const socket: Socket = connect(listener.port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    const started = Date.now();
    const ended = new Promise<{ error: string | undefined; afterMs: number }>((resolve) => {
      let error: string | undefined;
      socket.on("error", (failure: NodeJS.ErrnoException) => {
        error = failure.code;
      });
      socket.once("close", () => resolve({ error, afterMs: Date.now() - started }));
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    for (const chunk of chunks) {
      if (socket.destroyed) break;
      socket.write(chunk);
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    if (closeAfterWrite) socket.end();
    const outcome = await ended;
    return { ...outcome, received: Buffer.concat(received) };
  }

  it.each<[string, Buffer]>([
    ["plain HTTP", Buffer.from("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")],
    ["a hello with two server names", clientHelloBytes({ serverNames: ["a.test", "b.test"] })],
    ["a hello declaring 1 MiB", Buffer.from([22, 3, 1, 0, 4, 1, 0x10, 0, 0])],
    ["a record of another type first", Buffer.from([23, 3, 3, 0, 1, 0])],
    ["a server name with a space", clientHelloBytes({ serverNames: ["a b.test"] })],
  ])("closes at once, answering nothing, a connection that sends %s", async (_case, bytes) => {
    const before = listener.handshakeFailures();
    const outcome = await exchange([bytes]);
    expect(outcome.received).toHaveLength(0);
    expect(outcome.afterMs).toBeLessThan(HELLO_TIMEOUT_MS);
    expect(listener.handshakeFailures()).toBe(before + 1);
  });

  it("closes a connection whose hello stops short, once the hello time is over", async () => {
    const before = listener.handshakeFailures();
    const hello = clientHelloBytes({ serverNames: ["slow.test"] });
    const outcome = await exchange([hello.subarray(0, 20)]);
    expect(outcome.received).toHaveLength(0);
    expect(outcome.afterMs).toBeGreaterThanOrEqual(HELLO_TIMEOUT_MS - 20);
    expect(listener.handshakeFailures()).toBe(before + 1);
  });

  it("cuts a client that trickles its hello within the bound's time, however often it sends", async () => {
    const before = listener.handshakeFailures();
    const hello = clientHelloBytes({ serverNames: ["trickle.test"] });
    const bytes = [...hello.subarray(0, 40)].map((byte) => Buffer.of(byte));
    const outcome = await exchange(bytes, 40);
    expect(outcome.received).toHaveLength(0);
    expect(outcome.afterMs).toBeLessThan(bytes.length * 40);
    expect(listener.handshakeFailures()).toBe(before + 1);
  });

  it("counts a client that closes in the middle of its hello, and stays up", async () => {
    const before = listener.handshakeFailures();
    const hello = clientHelloBytes({ serverNames: ["gone.test"] });
    const outcome = await exchange([hello.subarray(0, 30)], 0, true);
    expect(outcome.received).toHaveLength(0);
    expect(listener.handshakeFailures()).toBe(before + 1);
  });

  it("gathers a hello sent in pieces and across records, and answers its unknown name with the alert", async () => {
    const hello = clientHelloBytes({ serverNames: ["pieces.test"], recordSize: 16 });
    const pieces = [hello.subarray(0, 3), hello.subarray(3, 50), hello.subarray(50)];
    const outcome = await exchange(pieces, 20);
    expect([...outcome.received]).toEqual([...UNRECOGNIZED_NAME_ALERT]);
  });

  it("closes a hello without a server name that no certificate could serve", async () => {
    const outcome = await exchange([clientHelloBytes()]);
    expect(outcome.received).toHaveLength(0);
  });
});

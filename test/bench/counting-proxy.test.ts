import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CountingProxy, startCountingProxy } from "../../bench/workers/counting-proxy.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";

const prefix = uniquePrefix("counting-proxy");
const redisPort = Number(new URL(REDIS_URL).port || 6379);
let proxy: CountingProxy;
const clients: Redis[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  proxy = await startCountingProxy(redisPort);
});

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
  for (const socket of sockets.splice(0)) socket.destroy();
});

afterAll(async () => {
  await proxy.close();
  const cleaner = new Redis(REDIS_URL);
  await deleteKeysWithPrefix(cleaner, prefix);
  cleaner.disconnect();
});

/** An ioredis client through the proxy, connected, with the window emptied of its set-up. */
async function connectedClient(): Promise<Redis> {
  const client = new Redis(proxy.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  clients.push(client);
  await client.connect();
  proxy.take();
  return client;
}

/** A raw socket through the proxy, for byte-exact writes. */
async function rawSocket(): Promise<Socket> {
  const socket = connect(proxy.port, "127.0.0.1");
  sockets.push(socket);
  await once(socket, "connect");
  return socket;
}

async function reply(socket: Socket, write: string | Buffer): Promise<Buffer> {
  const answered = once(socket, "data") as Promise<[Buffer]>;
  socket.write(write);
  return (await answered)[0];
}

describe("counting proxy", () => {
  it("counts commands written in one pipeline as one round trip, however many replies they get", async () => {
    const client = await connectedClient();
    await client.pipeline().set(`${prefix}:a`, "1").get(`${prefix}:a`).exists(`${prefix}:b`).ping().exec();
    const { counts, turns } = proxy.take();
    expect(counts.roundTrips).toBe(1);
    expect(turns.map((turn) => turn.commands)).toEqual([["SET", "GET", "EXISTS", "PING"]]);
    expect(counts.byKind.query.roundTrips).toBe(1);
  });

  it("counts one round trip per command when each reply is awaited before the next", async () => {
    const client = await connectedClient();
    await client.set(`${prefix}:c`, "1");
    await client.get(`${prefix}:c`);
    await client.ping();
    const { counts, turns } = proxy.take();
    expect(counts.roundTrips).toBe(3);
    expect(turns.map((turn) => turn.commands)).toEqual([["SET"], ["GET"], ["PING"]]);
  });

  it("counts the exact bytes of a known command and of its reply, each in its direction", async () => {
    const socket = await rawSocket();
    const key = `${prefix}:exact`;
    const set = `*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$5\r\nvalue\r\n`;
    expect((await reply(socket, set)).toString()).toBe("+OK\r\n");
    const get = `*2\r\n$3\r\nGET\r\n$${key.length}\r\n${key}\r\n`;
    expect((await reply(socket, get)).toString()).toBe("$5\r\nvalue\r\n");
    const { counts, turns } = proxy.take();
    expect(counts).toMatchObject({
      connections: 1,
      roundTrips: 2,
      commands: 2,
      bytesToServer: set.length + get.length,
      bytesToClient: 5 + 11,
      bytes: set.length + get.length + 16,
    });
    expect(turns).toEqual([
      {
        connection: expect.any(Number),
        commands: ["SET"],
        bytesToServer: set.length,
        bytesToClient: 5,
        kind: "query",
      },
      {
        connection: expect.any(Number),
        commands: ["GET"],
        bytesToServer: get.length,
        bytesToClient: 11,
        kind: "query",
      },
    ]);
  });

  it("counts a command written in several chunks before any reply as one round trip", async () => {
    const socket = await rawSocket();
    socket.write("*1\r\n$4\r\nPI");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await reply(socket, "NG\r\n")).toString()).toBe("+PONG\r\n");
    const { counts, turns } = proxy.take();
    expect(counts.roundTrips).toBe(1);
    expect(turns.map((turn) => turn.commands)).toEqual([["PING"]]);
  });

  it("counts ioredis' connection set-up as handshake turns and QUIT as a close turn, apart from queries", async () => {
    proxy.take();
    const client = new Redis(proxy.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    clients.push(client);
    await client.connect();
    await client.ping();
    await client.quit();
    const { counts, turns } = proxy.take();
    expect(counts.connections).toBe(1);
    const handshake = turns.filter((turn) => turn.kind === "handshake");
    expect(handshake.length).toBeGreaterThan(0);
    expect(handshake.flatMap((turn) => turn.commands)).toContain("INFO");
    expect(turns.filter((turn) => turn.kind === "query").map((turn) => turn.commands)).toEqual([["PING"]]);
    expect(turns.filter((turn) => turn.kind === "close").map((turn) => turn.commands)).toEqual([["QUIT"]]);
    expect(counts.roundTrips).toBe(handshake.length + 2);
    expect(counts.byKind.handshake.roundTrips).toBe(handshake.length);
    expect(counts.byKind.close.bytes).toBe("*1\r\n$4\r\nQUIT\r\n".length + "+OK\r\n".length);
  });

  it("counts a set-up command sent after a query as a query", async () => {
    const client = await connectedClient();
    await client.ping();
    await client.client("SETNAME", "counted");
    const { counts } = proxy.take();
    expect(counts.byKind).toMatchObject({ handshake: { roundTrips: 0 }, query: { roundTrips: 2 } });
  });
});

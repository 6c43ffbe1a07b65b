import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import type { Miniflare } from "miniflare";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EndpointRecord, SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import { createRedisClusterWriter } from "../../store/redis/writer.js";
import type { ClusterWriter } from "../../store/store.js";
import {
  deleteKeysWithPrefix,
  freePort,
  type PrivateRedis,
  REDIS_URL,
  startPrivateRedis,
  uniquePrefix,
} from "../support/redis.js";
import { buildWorkerBundle, runBundle, type WorkerBundle } from "./worker-bundle.js";

const CLUSTER = "east";

interface Backend {
  readonly server: Server;
  readonly ip: string;
  readonly port: number;
}

async function startBackend(
  ip: string,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Backend> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, ip, () => resolve());
  });
  return { server, ip, port: (server.address() as AddressInfo).port };
}

function closeBackend(backend: Backend): Promise<void> {
  return new Promise((resolve) => {
    backend.server.close(() => resolve());
    backend.server.closeAllConnections();
  });
}

/** Answers with its own address, so a test sees which backend the Worker picked. */
const namedBackend = (name: string) => (request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  response.writeHead(200, { "content-type": "text/plain", "x-backend": name });
  response.end(
    `${name} ${request.method} ${request.url} forwarded-host=${request.headers["x-forwarded-host"] ?? ""}`,
  );
};

function record(
  service: string,
  hosts: string[],
  ipv4: EndpointRecord[],
  ipv6: EndpointRecord[] = [],
): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster: CLUSTER,
    service,
    hosts,
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: ipv4, fallback: false, draining: [] },
    ipv6: { endpoints: ipv6, fallback: false, draining: [] },
  };
}

const at = (backend: Pick<Backend, "ip" | "port">): EndpointRecord => ({
  ip: backend.ip,
  port: backend.port,
});

async function publish(writer: ClusterWriter, records: ServiceRecord[]): Promise<void> {
  await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
  for (const each of records) await writer.put(each);
}

async function until<T>(
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const get = async (mf: Miniflare, url: string, init?: RequestInit) => {
  const response = await mf.dispatchFetch(url, init as Parameters<Miniflare["dispatchFetch"]>[1]);
  return { status: response.status, headers: response.headers, body: await response.text() };
};

describe("the Worker bundle in workerd", () => {
  let bundle: WorkerBundle;
  let redis: Redis;
  const prefixes: string[] = [];
  const running: Miniflare[] = [];
  const backends: Backend[] = [];

  const freshPrefix = () => {
    const prefix = uniquePrefix("workerd");
    prefixes.push(prefix);
    return prefix;
  };
  const worker = (bindings: Record<string, string>) => {
    const mf = runBundle(bundle, { LOG_LEVEL: "error", UPSTREAM_TRY_TIMEOUT_MS: "3000", ...bindings });
    running.push(mf);
    return mf;
  };
  const backend = async (ip: string, handler: (req: IncomingMessage, res: ServerResponse) => void) => {
    const started = await startBackend(ip, handler);
    backends.push(started);
    return started;
  };

  beforeAll(async () => {
    bundle = await buildWorkerBundle();
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((mf) => mf.dispose()));
    await Promise.all(backends.splice(0).map(closeBackend));
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await bundle.remove();
  });

  it("routes by Host to the backend the store lists, over IPv4 and IPv6 loopback", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    const api = await backend("::1", namedBackend("api"));
    await publish(createRedisClusterWriter(redis, { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(web)]),
      record("shop/api", ["api.example.test"], [], [at(api)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const toWeb = await get(mf, "http://web.example.test/hello?x=1");
    const toApi = await get(mf, "http://api.example.test/v1/items");

    expect(toWeb.status).toBe(200);
    expect(toWeb.body).toBe("web GET /hello?x=1 forwarded-host=web.example.test");
    expect(toApi.status).toBe(200);
    expect(toApi.body).toBe("api GET /v1/items forwarded-host=api.example.test");
  });

  it("streams the response: the first chunk arrives while the backend is still writing", async () => {
    const prefix = freshPrefix();
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const slow = await backend("127.0.0.1", (request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("first chunk;");
      void finished.then(() => response.end("last chunk"));
    });
    await publish(createRedisClusterWriter(redis, { prefix, cluster: CLUSTER }), [
      record("shop/stream", ["stream.example.test"], [at(slow)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    // identity: for a gzip-accepting client workerd compresses the text reply, and its compressor holds the
    // small first chunk back until the end (seen here); the Worker's own streaming is what this test is about.
    const response = await mf.dispatchFetch("http://stream.example.test/", {
      headers: { "accept-encoding": "identity" },
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    if (!reader) throw new Error("no response body");
    const decoder = new TextDecoder();
    let head = "";
    while (!head.includes("first chunk;")) {
      // Bounded: if the Worker buffered, this read would only return after finish(), which never comes.
      const { value, done } = await withTimeout(reader.read(), 10_000, "first chunk was held back");
      if (done) break;
      head += decoder.decode(value, { stream: true });
    }
    expect(head).toBe("first chunk;");
    finish();
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
    }
    expect(rest).toBe("last chunk");
  });

  it("answers 404 no_route for a host no Service is exposed at", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    await publish(createRedisClusterWriter(redis, { prefix, cluster: CLUSTER }), [
      record("shop/web", ["web.example.test"], [at(web)]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://unknown.example.test/");

    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ error: "no_route" });
  });

  it("answers 503 no_endpoints with Retry-After for a Service that has no endpoints", async () => {
    const prefix = freshPrefix();
    await publish(createRedisClusterWriter(redis, { prefix, cluster: CLUSTER }), [
      record("shop/empty", ["empty.example.test"], []),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://empty.example.test/");

    expect(response.status).toBe(503);
    expect(JSON.parse(response.body)).toEqual({ error: "no_endpoints" });
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("answers 502 bad_gateway when every backend refuses the connection", async () => {
    const prefix = freshPrefix();
    const closedPort = await freePort();
    await publish(createRedisClusterWriter(redis, { prefix, cluster: CLUSTER }), [
      record("shop/down", ["down.example.test"], [{ ip: "127.0.0.1", port: closedPort }]),
    ]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });

    const response = await get(mf, "http://down.example.test/");

    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toEqual({ error: "bad_gateway" });
  });

  it("picks up a changed record once the cache TTL has passed", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const writer = createRedisClusterWriter(redis, { prefix, cluster: CLUSTER });
    await publish(writer, [record("shop/web", ["web.example.test"], [at(before)])]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);

    await writer.put(record("shop/web", ["web.example.test"], [at(after)]));
    const seen = await until(
      () => get(mf, "http://web.example.test/"),
      (response) => response.body.startsWith("after "),
    );

    expect(seen.status).toBe(200);
    expect(seen.body).toMatch(/^after /);
  });

  describe("with Redis going away", () => {
    let privateRedis: PrivateRedis;
    let client: Redis;

    beforeAll(async () => {
      privateRedis = await startPrivateRedis();
      client = new Redis(privateRedis.url, { maxRetriesPerRequest: 1 });
      client.on("error", () => {});
    });
    afterAll(async () => {
      client.disconnect();
      await privateRedis.stop();
    });

    it("keeps serving the last known records when Redis stops answering", async () => {
      const prefix = freshPrefix();
      const web = await backend("127.0.0.1", namedBackend("web"));
      await publish(createRedisClusterWriter(client, { prefix, cluster: CLUSTER }), [
        record("shop/web", ["web.example.test"], [at(web)]),
      ]);
      const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "50" });
      expect((await get(mf, "http://web.example.test/")).status).toBe(200);

      await privateRedis.stop();
      // Several rounds past the TTL: each one tries a background reload against the dead Redis.
      const statuses: number[] = [];
      for (let round = 0; round < 5; round++) {
        await new Promise((resolve) => setTimeout(resolve, 80));
        statuses.push((await get(mf, "http://web.example.test/")).status);
      }

      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    });
  });

  it("answers 503 when Redis is unreachable and nothing was ever loaded", async () => {
    const deadPort = await freePort();
    const mf = worker({ REDIS_URL: `redis://127.0.0.1:${deadPort}`, EDGESLICE_PREFIX: freshPrefix() });

    const response = await get(mf, "http://web.example.test/");

    expect(response.status).toBe(503);
  });
});

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import type { Miniflare } from "miniflare";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type EndpointRecord, SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import type { ClusterWriter } from "../../store/store.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { buildWorkerBundle, runBundle, type WorkerBundle } from "./worker-bundle.js";

/** The cluster every workerd test publishes under. */
export const CLUSTER = "east";

export interface Backend {
  readonly ip: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface WorkerFixture {
  /** The shared client on REDIS_URL (valid inside tests). */
  redis(): Redis;
  /** A key prefix of this run, deleted after the file. */
  freshPrefix(): string;
  /** The bundle in workerd with these vars/secrets (LOG_LEVEL error and a 3 s try timeout unless given). */
  worker(bindings: Record<string, string>): Miniflare;
  /** An HTTP backend on a loopback address, closed after the test. */
  backend(ip: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Backend>;
  /** Closes anything else with a close() after the test. */
  closesAfterEach<T extends { close(): Promise<void> }>(started: T): T;
}

/**
 * Builds the Worker bundle once for the test file (worker-bundle.ts), keeps one Redis client, and after
 * each test disposes its workerd instances and closes its backends; after the file, deletes its keys.
 */
export function workerFixture(tag: string): WorkerFixture {
  let bundle: WorkerBundle;
  let redis: Redis;
  const prefixes: string[] = [];
  const running: Miniflare[] = [];
  const closeables: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    bundle = await buildWorkerBundle();
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((mf) => mf.dispose()));
    await Promise.all(closeables.splice(0).map((closeable) => closeable.close()));
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await bundle.remove();
  });

  const closesAfterEach = <T extends { close(): Promise<void> }>(started: T): T => {
    closeables.push(started);
    return started;
  };
  return {
    redis: () => redis,
    freshPrefix() {
      const prefix = uniquePrefix(tag);
      prefixes.push(prefix);
      return prefix;
    },
    worker(bindings) {
      const mf = runBundle(bundle, { LOG_LEVEL: "error", UPSTREAM_TRY_TIMEOUT_MS: "3000", ...bindings });
      running.push(mf);
      return mf;
    },
    backend: async (ip, handler) => closesAfterEach(await startBackend(ip, handler)),
    closesAfterEach,
  };
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
  return {
    ip,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Answers with its own address, so a test sees which backend the Worker picked. */
export const namedBackend = (name: string) => (request: IncomingMessage, response: ServerResponse) => {
  request.resume();
  response.writeHead(200, { "content-type": "text/plain", "x-backend": name });
  response.end(
    `${name} ${request.method} ${request.url} forwarded-host=${request.headers["x-forwarded-host"] ?? ""}`,
  );
};

export function record(
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

export const at = (backend: Pick<Backend, "ip" | "port">): EndpointRecord => ({
  ip: backend.ip,
  port: backend.port,
});

export async function publish(writer: ClusterWriter, records: ServiceRecord[]): Promise<void> {
  await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
  for (const each of records) await writer.put(each);
}

export const get = async (mf: Miniflare, url: string, init?: RequestInit) => {
  const response = await mf.dispatchFetch(url, init as Parameters<Miniflare["dispatchFetch"]>[1]);
  return { status: response.status, headers: response.headers, body: await response.text() };
};

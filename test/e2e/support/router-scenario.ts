import { connect } from "node:net";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "./backends.js";
import { type KubeCluster, sliceFor, startKubeCluster } from "./kube-cluster.js";

/** The namespace every Service of the end-to-end scenario lives in. */
export const NS = "shop";

const WAIT_MS = 15_000;

export interface Reply {
  readonly status: number;
  readonly backend: string | undefined;
}

/**
 * The whole path, every part real: fake API server → informers/reconciler/Redis writer (sync/live.ts) →
 * Redis → the Node router (startNodeRouter: Redis source, undici pools) → HTTP backends on 127.0.0.1 and
 * ::1. Before the file: cluster "east" and one router with a client pool (`started()`); after it,
 * everything started here is stopped and the keys deleted.
 */
export function routerScenario() {
  const prefix = uniquePrefix("e2e");
  const fleet: BackendFleet = createBackendFleet();
  /** Names of every backend the store was ever told about: no other may be reached. */
  const listed = new Set<string>();
  const clusters: KubeCluster[] = [];
  const routers: NodeRouter[] = [];
  const clients: Pool[] = [];
  let admin: Redis;
  let first: { east: KubeCluster; router: NodeRouter; client: Pool } | undefined;

  async function startRouter(
    env: Record<string, string> = {},
  ): Promise<{ router: NodeRouter; client: Pool }> {
    const config = parseRouterConfig({
      REDIS_URL,
      PORT: "0",
      EDGESLICE_PREFIX: prefix,
      UPSTREAM_TRY_TIMEOUT_MS: "2000",
      UPSTREAM_RETRIES: "2",
      ...env,
    });
    const started = await startNodeRouter(config, {
      host: "127.0.0.1",
      logger: silentLogger,
      refreshIntervalMs: 100,
      drainMs: 1_000,
    });
    routers.push(started);
    const pool = new Pool(started.url, { connections: 16 });
    clients.push(pool);
    return { router: started, client: pool };
  }

  /** A sync for another cluster name writing to the same store, stopped after the file. */
  async function startCluster(options: { name: string; leaseMs?: number }): Promise<KubeCluster> {
    const cluster = await startKubeCluster({ ...options, prefix, redisUrl: REDIS_URL });
    clusters.push(cluster);
    return cluster;
  }

  const started = () => {
    if (!first) throw new Error("the scenario starts in beforeAll");
    return first;
  };

  async function send(host: string, options: { via?: Pool; path?: string } = {}): Promise<Reply> {
    const response = await (options.via ?? started().client).request({
      method: "GET",
      path: options.path ?? "/",
      headers: { host },
    });
    await response.body.text();
    const backend = response.headers["x-backend"];
    return { status: response.statusCode, backend: typeof backend === "string" ? backend : undefined };
  }

  async function sendMany(host: string, count: number, via?: Pool): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (let i = 0; i < count; i++) replies.push(await send(host, { via }));
    return replies;
  }

  /** Sends requests until `accept` holds for a reply; bounded. */
  async function untilReply(host: string, accept: (reply: Reply) => boolean, via?: Pool): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    let last: Reply | undefined;
    while (Date.now() < deadline) {
      last = await send(host, { via });
      if (accept(last)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no accepted reply from ${host}; last: ${JSON.stringify(last)}`);
  }

  async function until(predicate: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Whether the router's own store view lists `backend` as an active endpoint of the service. */
  function storeLists(on: NodeRouter, cluster: string, service: string, backend: RecordingBackend): boolean {
    const record = on.redisSource
      ?.current()
      ?.clusters.find((c) => c.name === cluster)
      ?.services.get(`${NS}/${service}`);
    const endpoints = [...(record?.ipv4.endpoints ?? []), ...(record?.ipv6.endpoints ?? [])];
    return endpoints.some((e) => e.ip === backend.ip && e.port === backend.port);
  }

  function list(
    cluster: KubeCluster,
    service: string,
    backend: RecordingBackend,
    conditions?: Parameters<typeof sliceFor>[3],
  ) {
    listed.add(backend.name);
    cluster.kube.apply(sliceFor(NS, service, backend, conditions));
  }

  function unlist(cluster: KubeCluster, service: string, backend: RecordingBackend) {
    cluster.kube.remove("EndpointSlice", NS, `${service}-${backend.name}`);
  }

  /** Names of the backends that got any request, and of those among them the store never listed. */
  function reached(): { all: string[]; unlisted: string[] } {
    const all = [...fleet.hitsByName()].filter(([, hits]) => hits > 0).map(([name]) => name);
    return { all, unlisted: all.filter((name) => !listed.has(name)) };
  }

  beforeAll(async () => {
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const east = await startCluster({ name: "east" });
    first = { east, ...(await startRouter()) };
  });

  afterAll(async () => {
    for (const pool of clients) await pool.destroy();
    for (const router of routers) await router.close();
    for (const cluster of clusters) await cluster.stop();
    await fleet.closeAll();
    await deleteKeysWithPrefix(admin, prefix);
    admin.disconnect();
  });

  return {
    fleet,
    started,
    startRouter,
    startCluster,
    send,
    sendMany,
    untilReply,
    until,
    storeLists,
    list,
    unlist,
    reached,
  };
}

/** Writes `text` on a raw socket to the router (for request targets an HTTP client will not send). */
export async function rawRequest(router: NodeRouter, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(router.port, "127.0.0.1");
    let received = "";
    socket.setTimeout(5_000, () => socket.destroy(new Error("raw request timed out")));
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
    socket.write(text);
  });
}

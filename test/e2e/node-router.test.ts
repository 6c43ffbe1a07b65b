import { connect } from "node:net";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "./support/backends.js";
import { exposedService, type KubeCluster, sliceFor, startKubeCluster } from "./support/kube-cluster.js";

/**
 * The whole path, every part real: fake API server → informers/reconciler/Redis writer (sync/live.ts) → Redis →
 * the Node router (startNodeRouter: Redis source, undici pools) → HTTP backends on 127.0.0.1 and ::1.
 */

const WAIT_MS = 15_000;
const NS = "shop";

interface Reply {
  readonly status: number;
  readonly backend: string | undefined;
}

describe("node router end to end", () => {
  const prefix = uniquePrefix("e2e");
  const fleet: BackendFleet = createBackendFleet();
  /** Names of every backend the store was ever told about: no other may be reached. */
  const listed = new Set<string>();
  const clusters: KubeCluster[] = [];
  const routers: NodeRouter[] = [];
  const clients: Pool[] = [];
  let admin: Redis;
  let east: KubeCluster;
  let router: NodeRouter;
  let client: Pool;

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

  async function send(host: string, options: { via?: Pool; path?: string } = {}): Promise<Reply> {
    const response = await (options.via ?? client).request({
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

  beforeAll(async () => {
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    east = await startKubeCluster({ name: "east", prefix, redisUrl: REDIS_URL });
    clusters.push(east);
    ({ router, client } = await startRouter());
  });

  afterAll(async () => {
    for (const pool of clients) await pool.destroy();
    for (const started of routers) await started.close();
    for (const cluster of clusters) await cluster.stop();
    await fleet.closeAll();
    await deleteKeysWithPrefix(admin, prefix);
    admin.disconnect();
  });

  it("routes to a new Service and spreads over backends as it scales up", async () => {
    const w1 = await fleet.start("web-1", "127.0.0.1");
    const w2 = await fleet.start("web-2", "127.0.0.1");
    east.kube.apply(exposedService(NS, "web", "web.e2e.test"));
    list(east, "web", w1);

    await untilReply("web.e2e.test", (reply) => reply.status === 200);
    const before = await sendMany("web.e2e.test", 20);
    expect(new Set(before.map((reply) => reply.backend))).toEqual(new Set(["web-1"]));

    list(east, "web", w2);
    await untilReply("web.e2e.test", (reply) => reply.backend === "web-2");
    const after = await sendMany("web.e2e.test", 40);
    expect(after.every((reply) => reply.status === 200)).toBe(true);
    expect(new Set(after.map((reply) => reply.backend))).toEqual(new Set(["web-1", "web-2"]));
  });

  it("stops sending to a backend once the store no longer lists it (scale-down)", async () => {
    const [w1] = [await fleet.start("web-3", "127.0.0.1")];
    if (!w1) throw new Error("unreachable");
    list(east, "web", w1);
    await until(() => storeLists(router, "east", "web", w1), "web-3 to be listed");

    unlist(east, "web", w1);
    await until(() => !storeLists(router, "east", "web", w1), "web-3 to be unlisted");
    const hitsAtRemoval = w1.hits();
    const replies = await sendMany("web.e2e.test", 40);

    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(w1.hits()).toBe(hitsAtRemoval);
  });

  it("sends no new traffic to a terminating pod, and falls back to serving-terminating ones when none is ready", async () => {
    const a1 = await fleet.start("api-1", "127.0.0.1");
    const a2 = await fleet.start("api-2", "127.0.0.1");
    east.kube.apply(exposedService(NS, "api", "api.e2e.test"));
    list(east, "api", a1);
    list(east, "api", a2);
    await until(
      () => storeLists(router, "east", "api", a1) && storeLists(router, "east", "api", a2),
      "api ready",
    );

    list(east, "api", a1, { ready: false, serving: true, terminating: true });
    await until(() => !storeLists(router, "east", "api", a1), "api-1 to leave the active set");
    const hitsWhenTerminating = a1.hits();
    const replies = await sendMany("api.e2e.test", 30);
    expect(replies.every((reply) => reply.status === 200 && reply.backend === "api-2")).toBe(true);
    expect(a1.hits()).toBe(hitsWhenTerminating);

    list(east, "api", a2, { ready: false, serving: true, terminating: true });
    await until(() => storeLists(router, "east", "api", a1), "the fallback to serving-terminating endpoints");
    const fallback = await sendMany("api.e2e.test", 20);
    expect(fallback.every((reply) => reply.status === 200)).toBe(true);
  });

  it("serves a dual-stack Service by the router's family policy and fails over to the other family", async () => {
    const v4 = await fleet.start("dual-v4", "127.0.0.1");
    const v6 = await fleet.start("dual-v6", "::1");
    east.kube.apply(exposedService(NS, "dual", "dual.e2e.test"));
    list(east, "dual", v4);
    list(east, "dual", v6);
    const preferV6 = await startRouter({ IP_FAMILY: "PreferIPv6" });
    await until(
      () => storeLists(router, "east", "dual", v4) && storeLists(router, "east", "dual", v6),
      "both families listed",
    );
    await until(() => storeLists(preferV6.router, "east", "dual", v6), "the second router to load");

    const byV4Policy = await sendMany("dual.e2e.test", 20);
    const byV6Policy = await sendMany("dual.e2e.test", 20, preferV6.client);
    expect(new Set(byV4Policy.map((reply) => reply.backend))).toEqual(new Set(["dual-v4"]));
    expect(new Set(byV6Policy.map((reply) => reply.backend))).toEqual(new Set(["dual-v6"]));

    unlist(east, "dual", v4);
    await until(() => !storeLists(router, "east", "dual", v4), "the IPv4 backend to go");
    const failedOver = await sendMany("dual.e2e.test", 10);
    expect(new Set(failedOver.map((reply) => reply.backend))).toEqual(new Set(["dual-v6"]));
  });

  it("drops a cluster whose sync went quiet once its lease lapses, keeping the fresh one", async () => {
    const west = await startKubeCluster({ name: "west", prefix, redisUrl: REDIS_URL, leaseMs: 1_000 });
    clusters.push(west);
    const onEast = await fleet.start("multi-east", "127.0.0.1");
    const onWest = await fleet.start("multi-west", "::1");
    east.kube.apply(exposedService(NS, "multi", "multi.e2e.test"));
    west.kube.apply(exposedService(NS, "multi", "multi.e2e.test"));
    list(east, "multi", onEast);
    list(west, "multi", onWest);
    await untilReply("multi.e2e.test", (reply) => reply.backend === "multi-west");
    await untilReply("multi.e2e.test", (reply) => reply.backend === "multi-east");

    await west.stop();
    const westView = () => router.redisSource?.current()?.clusters.find((c) => c.name === "west");
    await until(() => westView()?.stale === true, "west to go stale");
    const hitsWhenStale = onWest.hits();
    const replies = await sendMany("multi.e2e.test", 30);

    expect(replies.every((reply) => reply.status === 200 && reply.backend === "multi-east")).toBe(true);
    expect(onWest.hits()).toBe(hitsWhenStale);
    expect(westView()?.services.has(`${NS}/multi`)).toBe(true);
  });

  it("answers every idempotent request when a listed backend dies mid-run", async () => {
    const f1 = await fleet.start("flaky-1", "::1");
    const f2 = await fleet.start("flaky-2", "::1");
    east.kube.apply(exposedService(NS, "flaky", "flaky.e2e.test"));
    list(east, "flaky", f1);
    list(east, "flaky", f2);
    await untilReply("flaky.e2e.test", (reply) => reply.backend === "flaky-1");
    await untilReply("flaky.e2e.test", (reply) => reply.backend === "flaky-2");

    const statuses: number[] = [];
    let started = 0;
    const worker = async () => {
      while (started < 200) {
        started++;
        if (started === 60) void f1.kill();
        statuses.push((await send("flaky.e2e.test")).status);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));

    expect(statuses).toHaveLength(200);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(storeLists(router, "east", "flaky", f1)).toBe(true);
  });

  it("cannot be steered to an unlisted backend by Host, X-Forwarded-Host, absolute-form targets or dot segments", async () => {
    const decoy = await fleet.start("decoy", "127.0.0.1");

    const byHost = await send(decoy.address);
    const byForwarded = await client.request({
      method: "GET",
      path: "/",
      headers: { host: "nowhere.e2e.test", "x-forwarded-host": decoy.address },
    });
    await byForwarded.body.text();
    const byDots = await send("web.e2e.test", { path: `/../../${decoy.address}/` });
    const absolute = await rawRequest(
      router,
      `GET http://${decoy.address}/ HTTP/1.1\r\nHost: ${decoy.address}\r\nConnection: close\r\n\r\n`,
    );

    expect(byHost.status).toBe(404);
    expect(byForwarded.statusCode).toBe(404);
    expect(byDots.backend).not.toBe("decoy");
    expect(absolute).toMatch(/^HTTP\/1\.1 404/);
    expect(decoy.hits()).toBe(0);
  });

  it("never reached a backend the store did not list", () => {
    const reached = [...fleet.hitsByName()].filter(([, hits]) => hits > 0).map(([name]) => name);
    expect(reached.length).toBeGreaterThan(5);
    expect(reached.filter((name) => !listed.has(name))).toEqual([]);
  });
});

async function rawRequest(router: NodeRouter, text: string): Promise<string> {
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

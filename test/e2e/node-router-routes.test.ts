import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { binomialTail } from "../functions/statistics.js";
import { capturingLogger } from "../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "./support/backends.js";
import {
  endpoint,
  heartbeat,
  putRecord,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecord,
  serviceRecordV2,
} from "./support/contract-layout.js";

/**
 * The Node router (startNodeRouter: Redis source, undici pools) serving version 2 records written raw into
 * Redis (support/contract-layout.ts), next to version 1 ones, to loopback backends: weights, matches,
 * precedence, clusters merged, and a newer schema version refused.
 */
const prefix = uniquePrefix("e2e-routes");
const fleet: BackendFleet = createBackendFleet();
const { logger, lines } = capturingLogger();
let redis: Redis;
let router: NodeRouter;
let client: Pool;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  for (const cluster of ["east", "west", "old"]) await heartbeat(redis, prefix, cluster, 120_000);
  const config = parseRouterConfig({ REDIS_URL, PORT: "0", EDGESLICE_PREFIX: prefix, LOG_LEVEL: "error" });
  router = await startNodeRouter(config, { host: "127.0.0.1", logger, refreshIntervalMs: 100, drainMs: 500 });
  client = new Pool(router.url, { connections: 8 });
});

afterAll(async () => {
  await client.destroy();
  await router.close();
  await fleet.closeAll();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

async function get(host: string, path = "/", method = "GET", headers: Record<string, string> = {}) {
  const response = await client.request({ method: method as "GET", path, headers: { host, ...headers } });
  const body = await response.body.text();
  const backend = response.headers["x-backend"];
  return { status: response.statusCode, backend: typeof backend === "string" ? backend : undefined, body };
}

async function untilServed(host: string, path = "/"): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await get(host, path)).status === 404) {
    if (Date.now() > deadline) throw new Error(`${host}${path} was never routed`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends requests to `host` until each of `backends` has answered one (bounded). */
async function untilAnswered(host: string, backends: readonly string[]): Promise<void> {
  const seen = new Set<string>();
  for (let i = 0; i < 1_000 && !backends.every((name) => seen.has(name)); i++) {
    const { backend } = await get(host);
    if (backend !== undefined) seen.add(backend);
  }
  if (!backends.every((name) => seen.has(name)))
    throw new Error(`${host}: ${[...seen]} answered, not all of ${backends}`);
}

/** Counts of each answer over `n` requests: the backend's name, or the status the router answered. */
async function tally(host: string, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const reply = await get(host);
    const key = reply.backend ?? String(reply.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

async function service(cluster: string, name: string, ...backends: RecordingBackend[]) {
  await putServiceV2(
    redis,
    prefix,
    serviceRecordV2({
      cluster,
      service: `shop/${name}`,
      ports: [
        {
          number: 80,
          ipv4: backends.filter((b) => !b.ip.includes(":")).map((b) => endpoint(b.ip, b.port)),
          ipv6: backends.filter((b) => b.ip.includes(":")).map((b) => endpoint(b.ip, b.port)),
        },
      ],
    }),
  );
}

const to = (name: string, weight = 1) => ({ service: `shop/${name}`, port: 80, weight });

describe("the Node router on version 2 records", () => {
  it("splits requests by weight: 90/10 over 500 requests, within a bound the binomial tail justifies", async () => {
    await service("east", "stable", await fleet.start("stable", "127.0.0.1"));
    await service("east", "canary", await fleet.start("canary", "127.0.0.1"));
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/split", {
        hostnames: ["split.test"],
        rules: [routeRule([to("stable", 90), to("canary", 10)])],
      }),
    );
    await untilServed("split.test");
    // untilServed stops at the first answer that is not a 404; count only once both Services answered (a full
    // run here once saw one 503 among the 500, not seen again in 20 runs of this file under load).
    await untilAnswered("split.test", ["canary", "stable"]);
    // Canary requests ~ Binomial(500, 0.1): mean 50, sd 6.7; off by 36 or more has probability < 1e-6.
    expect(binomialTail(500, 0.1, 36)).toBeLessThan(1e-6);
    const counts = await tally("split.test", 500);
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(["canary", "stable"]);
    expect(Math.abs((counts.canary ?? 0) - 50), JSON.stringify(counts)).toBeLessThan(36);
  });

  it("answers an invalid backend's share 500 and the rest from the valid one", async () => {
    await service("east", "valid", await fleet.start("valid", "127.0.0.1"));
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/partial", {
        hostnames: ["partial.test"],
        rules: [routeRule([to("valid", 3), { invalid: "RefNotPermitted: other/svc", weight: 1 }])],
      }),
    );
    await untilServed("partial.test");
    // 500s ~ Binomial(400, 0.25): mean 100, sd 8.7; off by 45 or more has probability < 1e-6.
    expect(binomialTail(400, 0.25, 45)).toBeLessThan(1e-6);
    const counts = await tally("partial.test", 400);
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(["500", "valid"]);
    expect(Math.abs((counts["500"] ?? 0) - 100), JSON.stringify(counts)).toBeLessThan(45);
  });

  it("ranks matches: Exact over PathPrefix, the older route on a tie, an exact host over a wildcard", async () => {
    for (const name of ["prefix", "exact", "younger", "wild"])
      await service("east", name, await fleet.start(name, "127.0.0.1"));
    const match = (type: "Exact" | "PathPrefix", value: string) => ({
      matches: [{ path: { type, value }, headers: [] }],
    });
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/prefix", {
        hostnames: ["rank.test"],
        createdAt: 1_000,
        rules: [routeRule([to("prefix")], match("PathPrefix", "/api"))],
      }),
    );
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/exact", {
        hostnames: ["rank.test"],
        createdAt: 3_000,
        rules: [routeRule([to("exact")], match("Exact", "/api/health"))],
      }),
    );
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/younger", {
        hostnames: ["rank.test"],
        createdAt: 2_000,
        rules: [routeRule([to("younger")], match("PathPrefix", "/api/"))],
      }),
    );
    await putRoute(
      redis,
      prefix,
      "east",
      routeRecord("httproute:shop/wild", {
        hostnames: ["*.wild.test"],
        rules: [routeRule([to("wild")])],
      }),
    );
    // East's change stream is applied in order: once the last route put is served, the other three are too.
    await untilServed("deep.sub.wild.test");
    expect((await get("rank.test", "/api/health")).backend).toBe("exact");
    expect((await get("rank.test", "/api/health/x")).backend).toBe("prefix");
    expect((await get("rank.test", "/api")).backend).toBe("prefix");
    expect((await get("rank.test", "/other")).status).toBe(404);
    expect((await get("deep.sub.wild.test", "/")).backend).toBe("wild");
  });

  it("merges the endpoints of a route two clusters publish, and serves a version 1 cluster next to them", async () => {
    await service("east", "both", await fleet.start("both-east", "127.0.0.1"));
    await service("west", "both", await fleet.start("both-west", "::1"));
    const both = routeRecord("httproute:shop/both", {
      hostnames: ["both.test"],
      rules: [routeRule([to("both")])],
    });
    await putRoute(redis, prefix, "east", both);
    await putRoute(redis, prefix, "west", { ...both, createdAt: 7_000 });
    const legacy = await fleet.start("legacy", "127.0.0.1");
    await putRecord(
      redis,
      prefix,
      serviceRecord({
        cluster: "old",
        service: "shop/legacy",
        hosts: ["legacy.test"],
        ipv4: [endpoint(legacy.ip, legacy.port)],
      }),
    );
    await untilServed("legacy.test");
    await untilServed("both.test");
    const deadline = Date.now() + 10_000;
    let counts = await tally("both.test", 60);
    // Each cluster's copy arrives through its own change stream: wait for the second to be applied.
    while (Object.keys(counts).length < 2 && Date.now() < deadline) counts = await tally("both.test", 60);
    expect(Object.keys(counts).sort()).toEqual(["both-east", "both-west"]);
    expect((await get("legacy.test", "/any")).backend).toBe("legacy");
  });

  it("routes a canary only east has: its share to east's canary, the rest to both clusters; a Service no cluster has answered 500", async () => {
    await service("east", "main", await fleet.start("main-east", "127.0.0.1"));
    await service("west", "main", await fleet.start("main-west", "127.0.0.1"));
    await service("east", "new", await fleet.start("new-east", "127.0.0.1"));
    // The sync of each cluster publishes the same record, whether or not it has the canary Service yet.
    const rollout = routeRecord("httproute:shop/rollout", {
      hostnames: ["rollout.test"],
      rules: [
        routeRule([to("main", 3), to("new", 1)]),
        routeRule([to("main", 1), to("nowhere", 1)], {
          matches: [{ path: { type: "PathPrefix", value: "/ghost" }, headers: [] }],
        }),
      ],
    });
    await putRoute(redis, prefix, "east", rollout);
    await putRoute(redis, prefix, "west", { ...rollout, createdAt: 9_000 });
    await untilServed("rollout.test");
    const deadline = Date.now() + 10_000;
    let counts = await tally("rollout.test", 40);
    while (Object.keys(counts).length < 3 && Date.now() < deadline) counts = await tally("rollout.test", 40);
    // Canary answers ~ Binomial(400, 0.25): mean 100, sd 8.7; off by 45 or more has probability < 1e-6.
    expect(binomialTail(400, 0.25, 45)).toBeLessThan(1e-6);
    counts = await tally("rollout.test", 400);
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual([
      "main-east",
      "main-west",
      "new-east",
    ]);
    expect(Math.abs((counts["new-east"] ?? 0) - 100), JSON.stringify(counts)).toBeLessThan(45);

    const ghost = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const reply = await get("rollout.test", "/ghost");
      ghost.add(reply.backend ?? `${reply.status} ${(JSON.parse(reply.body) as { error: string }).error}`);
    }
    expect([...ghost].sort()).toEqual(["500 invalid_backend", "main-east", "main-west"]);
  });

  it("refuses records of a newer schema version with one clear line, the rest serving on", async () => {
    await putRoute(redis, prefix, "west", {
      id: "httproute:shop/future",
      raw: JSON.stringify({
        ...routeRecord("httproute:shop/future", {
          hostnames: ["future.test"],
          rules: [routeRule([to("both")])],
        }),
        v: 3,
      }),
    });
    await putServiceV2(redis, prefix, {
      ...serviceRecordV2({ cluster: "west", service: "shop/later", ports: [] }),
      v: 3,
    } as never);
    await putRoute(
      redis,
      prefix,
      "west",
      routeRecord("httproute:shop/marker", {
        hostnames: ["marker.test"],
        rules: [routeRule([to("both")])],
      }),
    );
    await untilServed("marker.test");
    expect((await get("future.test")).status).toBe(404);
    expect((await get("both.test")).status).toBe(200);
    const refused = lines.filter((line) => String(line.msg).startsWith("record schema version"));
    expect(refused.map((line) => [line.msg, line.cluster])).toEqual([
      [
        "record schema version 3 is newer than this router understands (2): upgrade routers before syncs",
        "west",
      ],
    ]);
  });
});

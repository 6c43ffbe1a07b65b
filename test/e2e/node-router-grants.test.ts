import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import type { RouteRecord } from "../../store/routes.js";
import { capturingLogger } from "../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "./support/backends.js";
import {
  endpoint,
  heartbeat,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecordV2,
} from "./support/contract-layout.js";

/**
 * Two clusters in the real Redis: "pay" serves pay.test from its pod on 127.0.0.1; "evil", whose sync
 * credential is the attacker's, has its pod on ::1 and publishes everything that took pay.test before
 * CLUSTER_GRANTS: an older route for the host, a more specific Exact /login route, an identical copy of pay's
 * route (same id, so it would merge) over its own pay/web pods, and, for its own granted host, pay's pod
 * address. The Node router with the grants never sends pay.test to evil; one without them does.
 */
const prefix = uniquePrefix("e2e-grants");
const CLUSTER_GRANTS = "pay=hosts:pay.test networks:127.0.0.1/32; evil=hosts:*.evil.test networks:::1/128";
const ADMIN_TOKEN = "grants-admin";
const fleet: BackendFleet = createBackendFleet();
const { logger, lines } = capturingLogger();
let redis: Redis;
let payPod: RecordingBackend;
let evilPod: RecordingBackend;
let granted: NodeRouter;
let ungranted: NodeRouter;

const to = (service: string) => ({ service, port: 80, weight: 1 });
const payRoute = routeRecord("httproute:pay/web", {
  hostnames: ["pay.test"],
  createdAt: 5_000,
  rules: [routeRule([to("pay/web")])],
});
const attacks: RouteRecord[] = [
  routeRecord("httproute:evil/older", {
    hostnames: ["pay.test"],
    createdAt: 1,
    rules: [routeRule([to("evil/pods")])],
  }),
  routeRecord("httproute:evil/login", {
    hostnames: ["pay.test"],
    createdAt: 9_000,
    rules: [
      routeRule([to("evil/pods")], { matches: [{ path: { type: "Exact", value: "/login" }, headers: [] }] }),
    ],
  }),
  payRoute,
  routeRecord("httproute:evil/own", { hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] }),
];

const pools = new Map<NodeRouter, Pool>();

async function startRouter(env: Record<string, string>, log = silentLogger): Promise<NodeRouter> {
  const config = parseRouterConfig({ REDIS_URL, PORT: "0", EDGESLICE_PREFIX: prefix, ADMIN_TOKEN, ...env });
  const router = await startNodeRouter(config, {
    host: "127.0.0.1",
    logger: log,
    refreshIntervalMs: 100,
    drainMs: 500,
  });
  pools.set(router, new Pool(router.url, { connections: 4 }));
  return router;
}

/** One GET through `router`: the backend that answered (its name), or the router's status. */
async function answer(router: NodeRouter, host: string, path: string): Promise<string> {
  const pool = pools.get(router);
  if (!pool) throw new Error("not a router of this file");
  const response = await pool.request({ method: "GET", path, headers: { host } });
  await response.body.text();
  const backend = response.headers["x-backend"];
  return typeof backend === "string" ? backend : String(response.statusCode);
}

async function answers(router: NodeRouter, host: string, path: string, count: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) seen.add(await answer(router, host, path));
  return seen;
}

async function explain(router: NodeRouter, host: string, path: string) {
  const response = await fetch(`${router.adminUrl}/_edgeslice/explain?host=${host}&path=${path}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (await response.json()) as {
    result: string;
    route?: { id: string };
    refused?: { id: string }[];
    why: string[];
  };
}

/** Until the router has read every record of both clusters: evil's own host answers, and explain names each refusal. */
async function untilLoaded(router: NodeRouter): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const own = await answer(router, "a.evil.test", "/");
    const refused = (await explain(router, "pay.test", "/login")).refused?.map((refusal) => refusal.id) ?? [];
    if (own === "evil" && refused.length === 3) return;
    if (Date.now() > deadline) throw new Error(`router never loaded both clusters: ${own} ${refused}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  payPod = await fleet.start("pay", "127.0.0.1");
  evilPod = await fleet.start("evil", "::1");
  await heartbeat(redis, prefix, "pay", 120_000);
  await heartbeat(redis, prefix, "evil", 120_000);
  const pods = (cluster: string, service: string, pod: RecordingBackend) =>
    serviceRecordV2({
      cluster,
      service,
      ports: [{ number: 80, [pod.ip.includes(":") ? "ipv6" : "ipv4"]: [endpoint(pod.ip, pod.port)] }],
    });
  await putServiceV2(redis, prefix, pods("pay", "pay/web", payPod));
  await putRoute(redis, prefix, "pay", payRoute);
  await putServiceV2(redis, prefix, pods("evil", "pay/web", evilPod));
  await putServiceV2(redis, prefix, pods("evil", "evil/pods", evilPod));
  await putServiceV2(
    redis,
    prefix,
    serviceRecordV2({
      cluster: "evil",
      service: "evil/web",
      ports: [
        { number: 80, ipv4: [endpoint(payPod.ip, payPod.port)], ipv6: [endpoint(evilPod.ip, evilPod.port)] },
      ],
    }),
  );
  for (const route of attacks) await putRoute(redis, prefix, "evil", route);
  granted = await startRouter({ CLUSTER_GRANTS, IP_FAMILY: "PreferIPv4" }, logger);
  ungranted = await startRouter({});
  await untilLoaded(granted);
});

afterAll(async () => {
  await Promise.all([...pools.values()].map((pool) => pool.destroy()));
  await granted?.close();
  await ungranted?.close();
  await fleet.closeAll();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

describe("the Node router with CLUSTER_GRANTS against a cluster whose credential is the attacker's", () => {
  it("without the grants, the same records send pay.test to the attacker's pod (the attack is real)", async () => {
    const deadline = Date.now() + 10_000;
    while ((await answer(ungranted, "pay.test", "/login")) !== "evil") {
      if (Date.now() > deadline) throw new Error("the ungranted router never routed the attack");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await answers(ungranted, "pay.test", "/", 20)).toEqual(new Set(["evil"]));
    expect(await answers(ungranted, "a.evil.test", "/", 20)).toEqual(new Set(["pay"]));
  });

  it("never sends pay.test to the attacker: not by an older route, an Exact /login match, nor a copy of its route", async () => {
    const evilHits = evilPod.hits();
    expect(await answers(granted, "pay.test", "/login", 50)).toEqual(new Set(["pay"]));
    expect(await answers(granted, "pay.test", "/", 50)).toEqual(new Set(["pay"]));
    expect(evilPod.hits() - evilHits).toBe(0);
  });

  it("serves the attacker's own host from its own network only, never from the victim's pod address it lists", async () => {
    const payHits = payPod.hits();
    expect(await answers(granted, "a.evil.test", "/", 20)).toEqual(new Set(["evil"]));
    expect(payPod.hits() - payHits).toBe(0);
  });

  it("explains pay.test/login as the victim's route and names each refused route of the attacker", async () => {
    const explained = await explain(granted, "pay.test", "/login");
    expect(explained.result).toBe("proxy");
    expect(explained.route?.id).toBe("httproute:pay/web");
    expect(explained.refused?.map((refusal) => refusal.id)).toEqual([
      "httproute:evil/login",
      "httproute:evil/older",
      "httproute:pay/web",
    ]);
    expect(explained.why).toContain(
      "CLUSTER_GRANTS refused evil's route httproute:evil/login: evil is not granted pay.test",
    );
  });

  it("logs each refusal once and counts it", async () => {
    const refusals = lines.filter((line) => String(line.msg).includes("CLUSTER_GRANTS"));
    expect(refusals.map((line) => line.route ?? line.service).sort()).toEqual([
      "evil/web",
      "httproute:evil/login",
      "httproute:evil/older",
      "httproute:pay/web",
    ]);
    const metrics = await (
      await fetch(`${granted.adminUrl}/_edgeslice/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).text();
    expect(metrics).toContain('edgeslice_grant_refusals_total{cluster="evil",kind="route"} 3');
    expect(metrics).toContain('edgeslice_grant_refusals_total{cluster="evil",kind="endpoints"} 1');
  });
});

import { describe, expect, it } from "vitest";
import { createRedisWriter } from "../../store/redis/writer.js";
import type { RouteRecord } from "../../store/routes.js";
import type { ServiceRecordV2 } from "../../store/services.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../e2e/support/contract-layout.js";
import { REDIS_URL } from "../support/redis.js";
import { type Backend, get, namedBackend, workerFixture } from "./worker-fixture.js";

/**
 * CLUSTER_GRANTS in the Worker bundle under real workerd, cold isolate (first request answered from the host
 * index) and warm alike: "evil" writes with its own sync writer (host index included) every route that took
 * pay.test before the grants, and lists pay's pod address for its own host; "pay" serves pay.test from
 * 127.0.0.1, evil's pod is on ::1.
 */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-grants");
const CLUSTER_GRANTS = "pay=hosts:pay.test networks:127.0.0.1/32; evil=hosts:*.evil.test networks:::1/128";
const ADMIN_TOKEN = "grants-admin";

const to = (service: string) => ({ service, port: 80, weight: 1 });
const pods = (cluster: string, service: string, ipv4: Backend[], ipv6: Backend[]): ServiceRecordV2 =>
  serviceRecordV2({
    cluster,
    service,
    ports: [
      {
        number: 80,
        ipv4: ipv4.map((pod) => endpoint(pod.ip, pod.port)),
        ipv6: ipv6.map((pod) => endpoint(pod.ip, pod.port)),
      },
    ],
  });

/** Both clusters' records, written by each cluster's own writer; the prefix they live under. */
async function publishBoth(payPod: Backend, evilPod: Backend): Promise<string> {
  const prefix = freshPrefix();
  const pay = createRedisWriter(redis(), { prefix, cluster: "pay" });
  const evil = createRedisWriter(redis(), { prefix, cluster: "evil" });
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
        routeRule([to("evil/pods")], {
          matches: [{ path: { type: "Exact", value: "/login" }, headers: [] }],
        }),
      ],
    }),
    payRoute,
    routeRecord("httproute:evil/own", { hostnames: ["a.evil.test"], rules: [routeRule([to("evil/web")])] }),
  ];
  for (const writer of [pay, evil])
    await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
  await pay.putService(pods("pay", "pay/web", [payPod], []));
  await pay.putRoute(payRoute);
  await evil.putService(pods("evil", "pay/web", [], [evilPod]));
  await evil.putService(pods("evil", "evil/pods", [], [evilPod]));
  await evil.putService(pods("evil", "evil/web", [payPod], [evilPod]));
  for (const route of attacks) await evil.putRoute(route);
  return prefix;
}

async function answers(mf: Parameters<typeof get>[0], url: string, count: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const reply = await get(mf, url);
    seen.add(reply.headers.get("x-backend") ?? String(reply.status));
  }
  return seen;
}

describe("CLUSTER_GRANTS in workerd", () => {
  it("without the grants, the attacker's records take pay.test and send its own host to the victim's pod", async () => {
    const prefix = await publishBoth(
      await backend("127.0.0.1", namedBackend("pay")),
      await backend("::1", namedBackend("evil")),
    );
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
    expect(await answers(mf, "http://pay.test/login", 5)).toEqual(new Set(["evil"]));
    expect(await answers(mf, "http://pay.test/", 5)).toEqual(new Set(["evil"]));
    expect(await answers(mf, "http://a.evil.test/", 5)).toEqual(new Set(["pay"]));
  });

  it("never sends pay.test to the attacker, from a cold isolate's first request on, and explains why", async () => {
    const prefix = await publishBoth(
      await backend("127.0.0.1", namedBackend("pay")),
      await backend("::1", namedBackend("evil")),
    );
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix, CLUSTER_GRANTS, ADMIN_TOKEN });
    expect(await answers(mf, "http://pay.test/login", 20)).toEqual(new Set(["pay"]));
    expect(await answers(mf, "http://pay.test/", 20)).toEqual(new Set(["pay"]));
    expect(await answers(mf, "http://a.evil.test/", 20)).toEqual(new Set(["evil"]));

    const explained = await get(mf, "http://router.test/_edgeslice/explain?host=pay.test&path=/login", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = JSON.parse(explained.body) as { route: { id: string }; refused: { id: string }[] };
    expect(body.route.id).toBe("httproute:pay/web");
    expect(body.refused.map((refusal) => refusal.id)).toEqual([
      "httproute:evil/login",
      "httproute:evil/older",
      "httproute:pay/web",
    ]);
  });

  it("refuses to start on a malformed CLUSTER_GRANTS, naming it", async () => {
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: freshPrefix(), CLUSTER_GRANTS: "pay=hosts:pay.test" });
    const reply = await get(mf, "http://pay.test/");
    expect(reply.status).toBe(500);
    expect(JSON.parse(reply.body)).toEqual({ error: "invalid_configuration" });
  });
});

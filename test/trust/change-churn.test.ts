import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { type BackendFleet, createBackendFleet, type RecordingBackend } from "../e2e/support/backends.js";
import { routeRecord, routeRule } from "../e2e/support/contract-layout.js";
import { beatAll, publishEastPay } from "./support/east-tenant.js";
import { announce, publishRoute, routeOfSize } from "./support/hostile-records.js";
import {
  adminJson,
  type BuiltRouter,
  get,
  type HostileWorld,
  metricsText,
  PREFIX,
  startHostileWorld,
  until,
} from "./support/hostile-world.js";

/**
 * Issue 35 item 4 on the built router, one ACL user per cluster: `evil` appends about 200 small change entries a
 * second to its own stream, each naming one large record of its own (4 MB, then one just under
 * RECORD_MAX_BYTES). Each entry used to re-read and re-decode it: 0.9-1.3 s of the router's CPU per second, and
 * other tenants' median latency up 28-100 times. Measured against the same router without churn, in this run.
 */
const CLUSTER_GRANTS = "east=hosts:pay.test networks:127.0.0.1/32; evil=hosts:*.evil.test networks:::1/128";
const SAMPLES = 1_000;
let world: HostileWorld;
let router: BuiltRouter;
const fleet: BackendFleet = createBackendFleet();
let eastPod: RecordingBackend;

interface Window {
  /** Median latency of east's requests, ms. */
  readonly p50: number;
  /** The router's CPU time per wall-clock second over the window. */
  readonly cpu: number;
}

/** SAMPLES sequential requests for pay.test: their median, and the router's CPU use meanwhile. */
async function measure(): Promise<Window> {
  const cpuBefore = await router.cpuMs();
  const start = performance.now();
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const sent = performance.now();
    const answer = await get(router, "pay.test");
    latencies.push(performance.now() - sent);
    expect(answer.backend).toBe("east");
  }
  const wall = performance.now() - start;
  const cpu = ((await router.cpuMs()) - cpuBefore) / wall;
  latencies.sort((a, b) => a - b);
  return { p50: latencies[Math.floor(SAMPLES / 2)] ?? 0, cpu };
}

/** Appends an entry naming `id` every 5 ms (about 200 a second) until stopped; resolves the count. */
function churn(id: string): { stop: () => Promise<number> } {
  let count = 0;
  const sync = world.sync("evil");
  const timer = setInterval(() => {
    count++;
    void sync.then((client) => announce(client, "evil", id)).catch(() => undefined);
  }, 5);
  return {
    stop: async () => {
      clearInterval(timer);
      return count;
    },
  };
}

let baseline: Window;

beforeAll(async () => {
  world = await startHostileWorld(["east", "evil"]);
  eastPod = await fleet.start("east", "127.0.0.1");
  await beatAll(world, ["east", "evil"]);
  await publishEastPay(world, eastPod);
  const sync = await world.sync("evil");
  await publishRoute(sync, "evil", routeOfSize("httproute:evil/huge", "huge.evil.test", 4_000_000));
  await publishRoute(sync, "evil", routeOfSize("httproute:evil/large", "large.evil.test", 1_000_000));
  // Written last: once it answers, the records before it were read.
  await publishRoute(
    sync,
    "evil",
    routeRecord("httproute:evil/mark", {
      hostnames: ["mark.evil.test"],
      rules: [routeRule([{ service: "evil/none", port: 80, weight: 1 }])],
    }),
  );
  router = await world.startRouter({ CLUSTER_GRANTS });
  await until(
    () => get(router, "mark.evil.test"),
    (answer) => answer.status !== 404,
    60_000,
  );
  await until(
    () => get(router, "pay.test"),
    (answer) => answer.status === 200,
  );
  await measure();
  baseline = await measure();
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await fleet.closeAll();
});

describe("a hostile cluster's change-stream churn against other tenants (built router)", () => {
  it.each([
    ["a 4 MB record", "httproute:evil/huge"],
    ["a record just under RECORD_MAX_BYTES", "httproute:evil/large"],
  ])("costs the others little while ~200 entries a second name %s", async (_name, id) => {
    const attack = churn(id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await measure();
    const entries = await attack.stop();
    console.log(
      `${id}: ${entries} entries; east p50 ${baseline.p50.toFixed(2)} -> ${during.p50.toFixed(2)} ms, router CPU ${baseline.cpu.toFixed(2)} -> ${during.cpu.toFixed(2)} s/s, RSS ${Math.round((await router.rss()) / 2 ** 20)} MiB`,
    );
    expect(during.p50 / baseline.p50).toBeLessThan(3);
    expect(during.cpu - baseline.cpu).toBeLessThan(0.3);
  });

  it("says the cluster's change stream is throttled, in explain and on the dashboard, and counts it", async () => {
    // Past its burst allowance at once: three thousand entries in one go.
    const sync = await world.sync("evil");
    const pipeline = sync.pipeline();
    for (let i = 0; i < 3_000; i++) {
      pipeline.xadd(
        clusterKeys(PREFIX, "evil").changes,
        "*",
        "v",
        "2",
        "kind",
        "route",
        "id",
        "httproute:evil/large",
        "op",
        "put",
      );
    }
    await pipeline.exec();
    const explained = await until(
      () =>
        adminJson<{ why: string[]; refused?: { cluster: string; kind: string }[] }>(
          router,
          "/_edgeslice/explain?host=pay.test&path=/",
        ),
      (item) => item.why.some((line) => line.includes("CLUSTER_MAX_CHANGES_PER_SECOND")),
      20_000,
    );
    expect(explained.why.join("\n")).toContain("evil's change stream runs faster");
    const kinds = (explained.refused ?? []).map((refusal) => `${refusal.cluster} ${refusal.kind}`);
    expect(kinds).toContain("evil changes");
    const dashboard = await adminJson<{ refused: { cluster: string; kind: string }[] }>(
      router,
      "/_edgeslice/dashboard",
    );
    expect(dashboard.refused.map((refusal) => `${refusal.cluster} ${refusal.kind}`)).toContain(
      "evil changes",
    );
    expect(await metricsText(router)).toMatch(
      /edgeslice_budget_refusals_total\{cluster="evil",kind="changes"\} [1-9]/,
    );
    expect((await get(router, "pay.test")).backend).toBe("east");
  });
});

import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealBinding, sealKey } from "../../store/certificate-seal.js";
import { CERTIFICATE_SCHEMA_VERSION } from "../../store/certificates.js";
import { clusterKeys, clustersKey } from "../../store/keys.js";
import { type BackendFleet, createBackendFleet } from "../e2e/support/backends.js";
import { createTestAuthority } from "../support/certificates.js";
import { beatAll, publishEastPay } from "./support/east-tenant.js";
import {
  type BuiltRouter,
  get,
  type HostileWorld,
  PREFIX,
  startHostileWorld,
  until,
} from "./support/hostile-world.js";

/**
 * The other records a cluster writes with its own sync credential, against the built router with CLUSTER_GRANTS
 * (one ACL user per cluster): a heartbeat record of 64 MB (read every refresh), a certificates hash of 120 MB
 * whose version it bumps ten times a second, 200,000 names added to the registry of clusters (polled for
 * certificates every second), and 200,000 heartbeat-shaped keys in its own hash tag (a SCAN meets each). Each
 * grew the router by tens to hundreds of MiB, or its CPU, before; now each is read bounded, or not at all.
 */
const CLUSTER_GRANTS = "east=hosts:pay.test networks:127.0.0.1/32; evil=hosts:*.evil.test networks:::1/128";
const MiB = 2 ** 20;
const storeKey = randomBytes(32);
let world: HostileWorld;
let router: BuiltRouter;
const fleet: BackendFleet = createBackendFleet();

interface Cost {
  readonly rss: number;
  readonly cpu: number;
}

/** The router's RSS at the end of `ms`, and its CPU use per second meanwhile, east's requests going on. */
async function costOver(ms: number): Promise<Cost> {
  const cpu = await router.cpuMs();
  const start = performance.now();
  while (performance.now() - start < ms) expect((await get(router, "pay.test")).backend).toBe("east");
  return { rss: await router.rss(), cpu: ((await router.cpuMs()) - cpu) / (performance.now() - start) };
}

let baseline: Cost;

beforeAll(async () => {
  world = await startHostileWorld(["east", "evil"]);
  const pod = await fleet.start("east", "127.0.0.1");
  await beatAll(world, ["east", "evil"]);
  await publishEastPay(world, pod);
  const leaf = createTestAuthority().issue(["pay.test"]);
  await (await world.writer("east")).certificates?.putCertificate({
    v: CERTIFICATE_SCHEMA_VERSION,
    id: "pay/tls",
    hostnames: ["pay.test"],
    version: createHash("sha256").update(leaf.cert).digest("hex"),
    cert: leaf.cert,
    key: sealKey(storeKey, sealBinding("east", "pay/tls"), leaf.key),
  });
  router = await world.startRouter({
    CLUSTER_GRANTS,
    TLS_STORE_KEY: storeKey.toString("base64"),
    HTTPS_PORT: "0",
  });
  await until(
    () => get(router, "pay.test"),
    (answer) => answer.status === 200,
  );
  await costOver(1_000);
  baseline = await costOver(2_000);
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await fleet.closeAll();
});

/** RSS bounded (CPU is logged: on a shared machine its noise is larger than these attacks' cost now). */
function expectBounded(label: string, cost: Cost): void {
  console.log(
    `${label}: RSS ${Math.round(baseline.rss / MiB)} -> ${Math.round(cost.rss / MiB)} MiB, CPU ${baseline.cpu.toFixed(2)} -> ${cost.cpu.toFixed(2)} s/s`,
  );
  expect(cost.rss - baseline.rss).toBeLessThan(32 * MiB);
}

/** SCAN commands Redis has served so far (INFO commandstats). */
async function scanCalls(): Promise<number> {
  const stats = String(await world.admin.info("commandstats"));
  return Number(/cmdstat_scan:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe("what else a hostile cluster publishes (built router)", () => {
  it("reads a 64 MB heartbeat record no further than 4 KiB, every refresh", async () => {
    const evil = await world.sync("evil");
    const keys = clusterKeys(PREFIX, "evil");
    await evil.set(
      keys.heartbeat,
      JSON.stringify({
        v: 1,
        cluster: "evil",
        holder: "x".repeat(64 * MiB),
        at: Date.now(),
        leaseMs: 600_000,
      }),
    );
    expectBounded("heartbeat of 64 MB", await costOver(3_000));
    await (await world.writer("evil")).heartbeat({ holder: "evil-0", leaseMs: 600_000, at: Date.now() });
  });

  it("does not read a certificates hash of 120 MB, however often its version moves", async () => {
    const evil = await world.sync("evil");
    const keys = clusterKeys(PREFIX, "evil");
    const pipeline = evil.pipeline();
    for (let i = 0; i < 2_000; i++) {
      pipeline.hset(
        keys.certificates,
        `evil/c${i}`,
        JSON.stringify({ v: 2, id: `evil/c${i}`, hostnames: ["a.evil.test"], cert: "A".repeat(60_000) }),
      );
    }
    await pipeline.exec();
    const bump = setInterval(() => void evil.incr(keys.certificatesVersion).catch(() => undefined), 100);
    try {
      expectBounded("certificates of 120 MB, version bumped 10/s", await costOver(3_000));
      expect(router.logLines().map((line) => line.msg)).toContain(
        "not reading a cluster's certificate records: too many or too large",
      );
    } finally {
      clearInterval(bump);
      await evil.del(keys.certificates);
    }
  });

  it("never polls the names a sync adds to the registry of clusters", async () => {
    const evil = await world.sync("evil");
    for (let batch = 0; batch < 20; batch++) {
      await evil.sadd(clustersKey(PREFIX), ...Array.from({ length: 10_000 }, (_, i) => `x${batch}-${i}`));
    }
    expectBounded("200,000 names in the registry", await costOver(3_000));
  });

  it("does not scan every second for heartbeat-shaped keys a cluster piles into its own hash tag", async () => {
    const evil = await world.sync("evil");
    for (let batch = 0; batch < 20; batch++) {
      const pipeline = evil.pipeline();
      for (let i = 0; i < 10_000; i++) pipeline.set(`${PREFIX}:{evil}:k${batch}-${i}}:{z}:heartbeat`, "1");
      await pipeline.exec();
    }
    const before = await scanCalls();
    expectBounded("200,000 heartbeat-shaped keys", await costOver(6_000));
    // One SCAN pass walks ~200 pages of 1,000 keys; a router scanning each refresh makes six passes in 6 s.
    const calls = (await scanCalls()) - before;
    console.log(`SCAN calls in 6 s: ${calls}`);
    expect(calls).toBeLessThan(2 * 220);
  });
});

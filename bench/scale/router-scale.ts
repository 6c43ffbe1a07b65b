import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { sleep } from "../../lib/async.js";
import { freePort } from "../../test/support/redis.js";
import { BENCH_HOST } from "../proxy/payloads.js";
import { type Child, cpuMicros, startChild } from "../support/child.js";
import type { ScaleStore } from "./store-fixture.js";

const BUILT_ROUTER = fileURLToPath(new URL("../../dist/router.js", import.meta.url));
const PROBE = fileURLToPath(new URL("../proxy/router-probe.mjs", import.meta.url));

export interface RouterScaleOptions {
  readonly redisUrl: string;
  readonly store: ScaleStore;
  /** Changes measured (and as many plain requests for the baseline). */
  readonly changes: number;
  readonly changesPerSecond: number;
  /**
   * When set, the router's V8 CPU profile of the changes phase is written to this file (the profiler's own
   * cost then weighs on that phase: its figures are not to quote).
   */
  readonly profileFile?: string | undefined;
}

export interface RouterScaleResult {
  readonly clusters: number;
  readonly services: number;
  readonly endpoints: number;
  /** Spawn → the probe host is proxied: the whole store loaded and its route table built. */
  readonly loadMs: number;
  /** The router's resident memory with the store loaded and routed once. */
  readonly rssBytes: number;
  /** Router CPU per change: (changes phase − baseline phase) / changes. */
  readonly cpuPerChangeMicros: number;
  /** CPU of the baseline phase per request, for scale. */
  readonly cpuPerRequestMicros: number;
}

/**
 * The built router (dist/router.js) over the store, with the probe Service (BENCH_HOST → the bench's backend on
 * 127.0.0.1) in cluster c0. A baseline phase sends one probe request per tick; the changes phase writes one
 * Service change per tick and sends the same request after it, so the router reads the change and routes
 * through the table of the new snapshot. The difference in the router's CPU is what the changes cost.
 */
export async function runRouterScale(options: RouterScaleOptions): Promise<RouterScaleResult> {
  const port = await freePort();
  const spawned = performance.now();
  const router = startChild(BUILT_ROUTER, {
    runner: "node",
    nodeFlags: ["--import", PROBE],
    env: {
      REDIS_URL: options.redisUrl,
      EDGESLICE_PREFIX: options.store.prefix,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      BENCH_ROUTER_PROBE: "process",
    },
    stdout: "ignore",
  });
  try {
    await routable(port, 180_000);
    const loadMs = performance.now() - spawned;
    const { store } = options;
    const intervalMs = 1000 / options.changesPerSecond;
    let next = 0;
    const changeSome = async () => {
      const n = (next++ * 7919) % store.services;
      await store.changeOne(Math.floor(n / store.servicesPerCluster), n % store.servicesPerCluster);
    };
    // Warm-up: the first changes and requests compile the paths measured below.
    for (let i = 0; i < 5; i++) {
      await changeSome();
      await sleep(intervalMs);
      await probeStatus(port);
    }
    const rssBytes = await residentBytes(router);
    const phase = async (withChange: boolean) => {
      const before = await cpuMicros(router);
      for (let i = 0; i < options.changes; i++) {
        if (withChange) await changeSome();
        await sleep(intervalMs);
        if ((await probeStatus(port)) !== 200) throw new Error("the router stopped routing the probe host");
      }
      return (await cpuMicros(router)) - before;
    };
    const baseline = await phase(false);
    if (options.profileFile) {
      router.send({ type: "profile-start" });
      await router.next("profile-started", 10_000);
    }
    const withChanges = await phase(true);
    if (options.profileFile) {
      router.send({ type: "profile-stop", file: options.profileFile });
      await router.next("profile-stopped", 60_000);
    }
    return {
      clusters: store.clusters,
      services: store.services,
      endpoints: store.endpoints,
      loadMs,
      rssBytes,
      cpuPerChangeMicros: (withChanges - baseline) / options.changes,
      cpuPerRequestMicros: baseline / options.changes,
    };
  } finally {
    await router.stop();
  }
}

async function residentBytes(child: Child): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

async function routable(port: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await probeStatus(port)) !== 200) {
    if (performance.now() > deadline)
      throw new Error(`the router did not route the probe host within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** GET /small for the probe host; 0 when the router does not answer. */
function probeStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const sent = request(
      { host: "127.0.0.1", port, path: "/small", headers: { host: BENCH_HOST } },
      (response) => {
        response.resume();
        response.once("end", () => resolve(response.statusCode ?? 0));
      },
    );
    sent.once("error", () => resolve(0));
    sent.end();
  });
}

import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { DEFAULT_PREFIX } from "../../store/names.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import type { PrivateRedis } from "../../test/support/redis.js";
import {
  buildRouter,
  type RouterRunner,
  startEdgesliceRouter,
  startRouterStore,
} from "../proxy/built-router.js";
import type { ProfileSummary } from "../proxy/cpu-profile.js";
import { BENCH_HOST, PAYLOAD_PATHS, type PayloadName } from "../proxy/payloads.js";
import { type Child, cpuMicros, gcCounts, startChild, taskSetAvailable } from "../support/child.js";
import { GRPC_HOST, GRPC_PATH, grpcRequestFile, publishGrpcRoute } from "./grpc-call.js";
import { profileH2Router } from "./h2-profile.js";
import { type H2loadPlan, type H2loadResult, runH2load } from "./h2load.js";
import { type HandshakeRound, handshakeRound, prepareTlsBench, untilHandshakes } from "./tls-handshakes.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BACKEND = here("../proxy/backend-process.ts");
const MINIMAL_H2 = here("./minimal-h2-proxy-process.ts");
const GRPC_BACKEND = here("./grpc-backend-process.ts");
const MINIMAL_GRPC = here("./minimal-grpc-proxy-process.ts");

/** `minimal`: the payload's minimal node:http2 proxy (to the HTTP/1.1 backend, or to the h2c gRPC one). */
export type H2Target = "minimal" | "edgeslice";
/** Bodies from the HTTP/1.1 backend, or unary gRPC calls to an h2c backend (built router only). */
export type H2Payload = PayloadName | "grpc";

export interface H2BenchOptions {
  readonly rounds: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** h2load connections, and streams each keeps in flight. */
  readonly clients: number;
  readonly streamsPerClient: number;
  readonly payloads: readonly H2Payload[];
  readonly pin: boolean;
  readonly runner: RouterRunner;
  /** Full TLS handshakes per second on the router's HTTPS_PORT against a minimal node:tls server (built runner). */
  readonly tls?: boolean;
  /** After each payload's rounds, the router's CPU profile over one more run (h2-profile.ts). */
  readonly profile?: boolean;
}

export interface H2Measurement {
  readonly target: H2Target;
  readonly payload: H2Payload;
  /** rps, CPU µs per request and mean ms of every round, in round order. */
  readonly roundsRps: readonly number[];
  readonly roundsCpu: readonly number[];
  readonly roundsMeanMs: readonly number[];
  /** V8's pauses per request (µs) and mark-compacts per 1,000 requests, every round (gc-counts.mjs). */
  readonly roundsGcMicros: readonly number[];
  readonly roundsMarkCompacts: readonly number[];
  /** Requests that failed or were not 2xx, over every round. */
  readonly failures: number;
}

export interface H2BenchReport {
  readonly measurements: readonly H2Measurement[];
  readonly layout: string;
  readonly profiles: readonly { readonly payload: H2Payload; readonly summary: ProfileSummary }[];
  readonly tls?: {
    readonly edgeslice: readonly HandshakeRound[];
    readonly minimal: readonly HandshakeRound[];
  };
}

interface Target {
  readonly name: H2Target;
  readonly port: number;
  readonly process: Child;
}

/**
 * HTTP/2 clients (h2load, h2c prior knowledge) through the edgeslice router and through a minimal `node:http2`
 * proxy to the same HTTP/1.1 backend, in interleaved rounds, with the CPU each proxy process spent per request.
 */
export async function runH2Bench(
  options: H2BenchOptions,
  log: (line: string) => void,
): Promise<H2BenchReport> {
  const pin = options.pin && taskSetAvailable() && cpus().length >= 2;
  const cpu = pin ? { proxy: 1, other: 0 } : { proxy: undefined, other: undefined };
  const layout = pin
    ? "pinned with taskset: proxy under test on CPU 1; backend and h2load share CPU 0"
    : `unpinned: backend, proxy and h2load share ${cpus().length} CPU(s)`;
  const children: Child[] = [];
  let store: PrivateRedis | undefined;
  try {
    if (options.runner === "built") {
      log("  npm run build (the bench runs node dist/router.js) ...");
      await buildRouter();
    }
    const backend = startChild(BACKEND, { cpu: cpu.other });
    children.push(backend);
    const { port: backendPort } = await backend.next<{ port: number }>("ready", 20_000);
    if (options.runner === "built") store = await startRouterStore(backendPort);
    const minimalH2 = await startTarget(MINIMAL_H2, { BENCH_BACKEND_PORT: String(backendPort) }, cpu.proxy);
    children.push(minimalH2.process);
    // gRPC needs the router to read a GRPCRoute's records: the built runner's Redis store only.
    let minimalGrpc: Target | undefined;
    let grpcBody: string | undefined;
    if (options.payloads.includes("grpc") && store) {
      const grpcBackend = startChild(GRPC_BACKEND, { cpu: cpu.other });
      children.push(grpcBackend);
      const { port: grpcPort } = await grpcBackend.next<{ port: number }>("ready", 20_000);
      const client = new Redis(store.url);
      try {
        await publishGrpcRoute(
          createRedisWriter(client, { prefix: DEFAULT_PREFIX, cluster: "bench" }),
          grpcPort,
        );
      } finally {
        client.disconnect();
      }
      minimalGrpc = await startTarget(MINIMAL_GRPC, { BENCH_GRPC_BACKEND_PORT: String(grpcPort) }, cpu.proxy);
      children.push(minimalGrpc.process);
      grpcBody = await grpcRequestFile();
    } else if (options.payloads.includes("grpc")) {
      log("  grpc skipped: it needs the built router (BENCH_ROUTER_RUNNER=built)");
    }
    const tls = options.tls && store ? await prepareTlsBench(store.url, cpu.proxy) : undefined;
    if (tls) children.push(tls.minimal);
    const router = await startEdgesliceRouter({
      runner: options.runner,
      backendPort,
      redisUrl: store?.url,
      cpu: cpu.proxy,
      ...(tls ? { env: tls.routerEnv } : {}),
    });
    children.push(router.child);
    const edgeslice: Target = { name: "edgeslice", port: router.port, process: router.child };
    const measurements: H2Measurement[] = [];
    const profiles: H2BenchReport["profiles"][number][] = [];
    for (const payload of options.payloads) {
      const minimal = payload === "grpc" ? minimalGrpc : minimalH2;
      if (!minimal) continue;
      const request: Pick<H2loadPlan, "url" | "data" | "headers"> =
        payload === "grpc"
          ? {
              url: `http://${GRPC_HOST}${GRPC_PATH}`,
              ...(grpcBody ? { data: grpcBody } : {}),
              headers: ["content-type: application/grpc", "te: trailers"],
            }
          : { url: `http://${BENCH_HOST}${PAYLOAD_PATHS[payload]}` };
      const plan = (target: Target): H2loadPlan => ({
        ...request,
        connectTo: `127.0.0.1:${target.port}`,
        clients: options.clients,
        streamsPerClient: options.streamsPerClient,
        durationSeconds: options.durationSeconds,
        warmupSeconds: 0,
        cpu: cpu.other,
      });
      const rounds = new Map<H2Target, H2Round[]>();
      for (let round = 0; round < options.rounds; round++) {
        for (const target of [minimal, edgeslice]) {
          log(`  ${target.name.padEnd(10)} ${payload.padEnd(5)} round ${round + 1}/${options.rounds} ...`);
          // Warmed up in a run of its own, so neither the warm-up's CPU nor its collections count.
          if (round === 0 && options.warmupSeconds > 0) {
            await runH2load({ ...plan(target), durationSeconds: options.warmupSeconds });
          }
          rounds.set(target.name, [
            ...(rounds.get(target.name) ?? []),
            await measuredRound(target.process, plan(target)),
          ]);
        }
      }
      for (const target of [minimal, edgeslice]) {
        const runs = rounds.get(target.name) ?? [];
        measurements.push({
          target: target.name,
          payload,
          roundsRps: runs.map((run) => run.result.rps),
          roundsCpu: runs.map((run) => run.cpu),
          roundsMeanMs: runs.map((run) => run.result.meanMs),
          roundsGcMicros: runs.map((run) => run.gcMicros),
          roundsMarkCompacts: runs.map((run) => run.markCompacts),
          failures: runs.reduce((sum, run) => sum + run.result.failed + run.result.non2xx, 0),
        });
      }
      if (options.profile) {
        log(`  edgeslice  ${payload.padEnd(5)} under the CPU profiler ...`);
        profiles.push({ payload, summary: await profileH2Router(edgeslice.process, plan(edgeslice)) });
      }
    }
    if (!tls) return { measurements, layout, profiles };
    await untilHandshakes(tls.httpsPort);
    const handshakes = { edgeslice: [] as HandshakeRound[], minimal: [] as HandshakeRound[] };
    for (let round = 0; round < options.rounds; round++) {
      log(`  tls handshakes round ${round + 1}/${options.rounds} ...`);
      handshakes.minimal.push(await handshakeRound(tls.minimalPort, tls.minimal, options.durationSeconds, 8));
      handshakes.edgeslice.push(
        await handshakeRound(tls.httpsPort, router.child, options.durationSeconds, 8),
      );
    }
    return { measurements, layout, profiles, tls: handshakes };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await store?.stop();
  }
}

interface H2Round {
  readonly result: H2loadResult;
  /** Per request: CPU µs of the proxy process, and its GC pauses in µs; mark-compacts per 1,000 requests. */
  readonly cpu: number;
  readonly gcMicros: number;
  readonly markCompacts: number;
}

/** One h2load run against `proxy`, with what the proxy process spent on it (warm-ups run before, uncounted). */
async function measuredRound(proxy: Child, plan: H2loadPlan): Promise<H2Round> {
  const gcBefore = await gcCounts(proxy);
  const cpuBefore = await cpuMicros(proxy);
  const result = await runH2load(plan);
  const cpuUsed = (await cpuMicros(proxy)) - cpuBefore;
  const gcAfter = await gcCounts(proxy);
  const requests = Math.max(1, result.succeeded);
  return {
    result,
    cpu: cpuUsed / requests,
    gcMicros: ((gcAfter.pauseMs - gcBefore.pauseMs) * 1000) / requests,
    markCompacts: ((gcAfter.markCompacts - gcBefore.markCompacts) * 1000) / requests,
  };
}

/** A proxy process of the bench, once it listens. */
async function startTarget(
  script: string,
  env: Record<string, string>,
  cpu: number | undefined,
): Promise<Target> {
  const child = startChild(script, { cpu, env });
  const { port } = await child.next<{ port: number }>("ready", 30_000);
  return { name: "minimal", port, process: child };
}

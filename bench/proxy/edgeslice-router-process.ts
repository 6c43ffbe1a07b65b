import { parseRouterConfig } from "../../functions/core/config.js";
import { startNodeRouter } from "../../functions/node/server.js";
import { createJsonLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import { SCHEMA_VERSION } from "../../store/records.js";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
import { BENCH_HOST } from "./payloads.js";

/**
 * edgeslice's Node router exactly as `npm run router` wires it (undici pools, Hono on @hono/node-server, p2c),
 * with the in-memory store holding one fresh cluster whose one Service routes BENCH_HOST to the bench backend.
 * The Redis source serves requests from the same kind of in-memory snapshot, so the hot path is identical.
 */
const backendPort = Number(process.env.BENCH_BACKEND_PORT);
if (!Number.isInteger(backendPort) || backendPort <= 0) throw new Error("BENCH_BACKEND_PORT must be set");

const store = new MemoryStore();
const writer = store.writer("bench");
await writer.put({
  v: SCHEMA_VERSION,
  cluster: "bench",
  service: "bench/backend",
  hosts: [BENCH_HOST],
  pathPrefix: "/",
  port: { name: "http", number: 80 },
  ipv4: { endpoints: [{ ip: "127.0.0.1", port: backendPort }], fallback: false, draining: [] },
  ipv6: { endpoints: [], fallback: false, draining: [] },
});
await writer.heartbeat({ holder: "bench", leaseMs: 24 * 3600 * 1000, at: Date.now() });

const config = parseRouterConfig({ PORT: "0", LOG_LEVEL: "error" });
const router = await startNodeRouter(config, {
  source: store,
  host: "127.0.0.1",
  logger: createJsonLogger({ level: "error", base: { component: "bench-router" } }),
  drainMs: 1_000,
});
tell({ type: "ready", port: router.port });
answerCpuUsage();
exitOnStop(() => router.close());

import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { startNodeRouter } from "../../functions/node/server.js";
import { createJsonLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import { answerCpuUsage, exitOnStop, tell } from "../support/child.js";
import { publishBenchRoute } from "./bench-route.js";

/**
 * edgeslice's Node router exactly as `npm run router` wires it (its own upstream client, Hono on @hono/node-server, p2c),
 * with the in-memory store holding one fresh cluster whose one Service routes BENCH_HOST to the bench backend.
 * The Redis source serves requests from the same kind of in-memory snapshot, so the hot path is identical.
 */
const backendPort = Number(process.env.BENCH_BACKEND_PORT);
if (!Number.isInteger(backendPort) || backendPort <= 0) throw new Error("BENCH_BACKEND_PORT must be set");

const store = new MemoryStore();
await publishBenchRoute(store.writer("bench"), backendPort);

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

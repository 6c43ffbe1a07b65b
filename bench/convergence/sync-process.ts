import { resourceUsage } from "node:process";
import { KubeConfig } from "@kubernetes/client-node";
import { createJsonLogger } from "../../lib/logger.js";
import { parseSyncConfig } from "../../sync/config.js";
import { startLive } from "../../sync/live.js";
import { exitOnStop, tell } from "../support/child.js";

/**
 * The real sync (client-node informers → reconciler → Redis writer, heartbeat) in a process of its own, as in
 * production, so its memory is measured alone and it does not share an event loop with the fake API server.
 * Env: BENCH_KUBE_URL, BENCH_KUBE_TOKEN and the sync's own variables (CLUSTER_NAME, REDIS_URL, ...).
 */
const kubeUrl = process.env.BENCH_KUBE_URL;
const kubeToken = process.env.BENCH_KUBE_TOKEN;
if (!kubeUrl || !kubeToken) throw new Error("BENCH_KUBE_URL and BENCH_KUBE_TOKEN must be set");

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: "bench", server: kubeUrl, skipTLSVerify: true }],
  users: [{ name: "bench", token: kubeToken }],
  contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
  currentContext: "bench",
});

const config = parseSyncConfig(process.env, () => "bench-sync");
const logger = createJsonLogger({
  level: config.logLevel,
  write: (line) => process.stderr.write(`${line}\n`),
  base: { component: "bench-sync" },
});

const startedAt = performance.now();
const live = await startLive(config, { logger, kubeConfig });

/** Bounded wait: the informers listed everything and the reconciler has nothing left to publish. */
const deadline = Date.now() + 120_000;
let listedMs: number | undefined;
while (Date.now() < deadline) {
  if (listedMs === undefined && live.watch.synced) listedMs = performance.now() - startedAt;
  if (live.watch.synced && live.publishing() && live.reconciler.pending === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const publishedMs = performance.now() - startedAt;
tell({ type: "synced", listedMs: listedMs ?? Number.NaN, publishedMs, memory: memorySample() });

process.on("message", (raw) => {
  if ((raw as { type?: unknown }).type === "memory") tell({ type: "memory", memory: memorySample() });
});
exitOnStop(() => live.stop());

function memorySample(): { rssBytes: number; heapUsedBytes: number; maxRssBytes: number } {
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed, maxRssBytes: resourceUsage().maxRSS * 1024 };
}

import { randomBytes } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRouterConfig, type RouterConfig } from "../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../functions/node/server.js";
import { exponentialDelay } from "../lib/backoff.js";
import { versionLine } from "../lib/build-info.js";
import { readCommandLine } from "../lib/command-line.js";
import { ConfigurationError } from "../lib/configuration-error.js";
import { EXIT_CODES } from "../lib/exit-codes.js";
import { createJsonLogger, type LogLevel } from "../lib/logger.js";
import { MemoryStore } from "../store/memory-store.js";
import { createRedisClient, type RedisClient, ROUTER_RECONNECT } from "../store/redis/client.js";
import { reportRedisConnection } from "../store/redis/connection-report.js";
import { describeRedisTarget } from "../store/redis/target.js";
import { createRedisWriter } from "../store/redis/writer.js";
import type { ClusterWriter } from "../store/store.js";
import { cacheFromObjects, loadManifests } from "../sync/kube/manifests.js";
import { createSyncMetrics } from "../sync/metrics.js";
import { createPublishPipeline, type PublishPipeline } from "../sync/publish/pipeline.js";
import { DEFAULT_VALVE_CONFIG } from "../sync/publish/safety-valve.js";
import { DEFAULT_ROUTE_SETTINGS, desiredRoutes } from "../sync/translate/desired-routes.js";
import { type KubeEndpointSlice, namespaceOf, SERVICE_NAME_LABEL } from "../sync/translate/kube-objects.js";
import type { ClusterCache } from "../sync/translate/types.js";
import { type DemoBackend, startDemoBackend } from "./demo-backend.js";
import { type DemoHttps, demoHttps } from "./demo-https.js";
import { banner, exposedHosts } from "./start-banner.js";

/**
 * `npm start`: the local all-in-one. Demo backends on the loopback addresses the examples/ slices list, the
 * real translation and reconciler publishing examples/ into a MemoryStore (or Redis when REDIS_URL is set),
 * and the Node router on PORT (8080), its admin endpoints on ADMIN_PORT (9901). SIGINT/SIGTERM stop everything and exit 0; a failure to start is one error
 * line, exit 78 for a setting (PORT taken, a bad variable), else 1.
 */

const USAGE = `Usage: npm start [-- --https]   (node --import tsx scripts/start.ts [--https])

The local all-in-one: demo backends on the loopback addresses the examples' EndpointSlices list, the sync's
translation and reconciler publishing examples/ (or EXAMPLES_DIR), and the Node router on 127.0.0.1: PORT
(8080), its admin endpoints on ADMIN_PORT (9901). It prints what to curl; Ctrl-C stops everything.

  --https      serve the demo over HTTPS too, on HTTPS_PORT (8443), with a self-signed certificate made at
               start for the demo's host names; it prints the curl that trusts it (docs/local.md)
  --help       show this text
  --version    print the version

Environment: PORT, ADMIN_PORT, HTTPS_PORT, ADMIN_TOKEN (default: random for the run), IP_FAMILY, REDIS_URL
(publish to that Redis, cluster "local", instead of memory), EDGESLICE_PREFIX, EXAMPLES_DIR, LOG_LEVEL.`;

const CLUSTER = "local";
const LEASE_MS = 30_000;
/** Only these are started as demo backends: a manifest can never make this script bind anything else. */
const LOOPBACK = new Set(["127.0.0.1", "::1"]);

interface Running {
  readonly backends: DemoBackend[];
  pipeline?: PublishPipeline;
  router?: NodeRouter;
  redis?: RedisClient;
  https?: DemoHttps | undefined;
}

const running: Running = { backends: [] };
const logger = createJsonLogger({
  level: logLevelOf(process.env.LOG_LEVEL),
  write: (line) => process.stderr.write(`${line}\n`),
});

async function main(flags: { readonly https: boolean }): Promise<void> {
  const examplesDir = resolve(process.env.EXAMPLES_DIR ?? join(projectRoot(), "examples"));

  const loaded = await loadManifests(examplesDir);
  for (const problem of loaded.problems) logger.warn("skipped manifest", { ...problem });
  await startDemoBackends(loaded.slices);

  // What the pipeline publishes, for the certificate's names and the banner: the same pure translation.
  const desired = desiredRoutes({
    services: loaded.services,
    objects: loaded.routeObjects,
    settings: DEFAULT_ROUTE_SETTINGS,
  });
  const hosts = exposedHosts(loaded.services);
  const routes = [...desired.routes.values()];
  const https = flags.https
    ? await demoHttps(loaded.routeObjects, [...hosts, ...routes.flatMap((route) => route.hostnames)])
    : undefined;
  running.https = https;

  // Local only: a random admin token when none is given, so the printed explain command works as is.
  const parsed = parseRouterConfig({
    ...process.env,
    PORT: process.env.PORT ?? "8080",
    ADMIN_TOKEN: process.env.ADMIN_TOKEN?.trim() || randomBytes(12).toString("hex"),
  });
  const config = https ? { ...parsed, tlsStoreKey: https.storeKey } : parsed;
  const store = openStore(config);
  const objects = https?.objects ?? loaded.routeObjects;
  await publish(examplesDir, loaded.services.length, {
    cache: cacheFromObjects(loaded.services, loaded.slices, objects),
    writer: store.writer,
    tlsStoreKey: https?.storeKey,
  });

  const router = await startNodeRouter(config, {
    logger,
    host: "127.0.0.1",
    ...(store.memory
      ? { source: store.memory, certificates: store.memory, backendTls: store.memory.backendTls }
      : {}),
  });
  running.router = router;
  process.stdout.write(
    banner({
      url: router.url,
      adminUrl: router.adminUrl,
      store: config.redis
        ? `Redis at ${describeRedisTarget(config.redis)} (prefix ${config.prefix})`
        : "memory",
      backends: running.backends,
      hosts,
      routes,
      adminToken: config.adminToken ?? "",
      ipFamily: config.ipFamily,
      ...(https && router.https ? { https: { port: router.https.port, caFile: https.certificateFile } } : {}),
    }),
  );
}

async function startDemoBackends(slices: readonly KubeEndpointSlice[]): Promise<void> {
  for (const target of demoTargets(slices)) {
    try {
      running.backends.push(await startDemoBackend(target));
    } catch (error) {
      // Typically ::1 on a host without IPv6: the other family still works.
      logger.warn("demo backend could not start", { ...target, error });
    }
  }
}

/** The store the demo publishes to: memory, or Redis when REDIS_URL is set (cluster `local`). */
function openStore(config: RouterConfig): { readonly writer: ClusterWriter; readonly memory?: MemoryStore } {
  if (config.redis === undefined) {
    const memory = new MemoryStore();
    return { writer: memory.writer(CLUSTER), memory };
  }
  const redis = createRedisClient(config.redis, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    connectionName: "edgeslice-start",
    retryStrategy: (attempt) => exponentialDelay(attempt, ROUTER_RECONNECT),
  });
  reportRedisConnection(redis, describeRedisTarget(config.redis), logger);
  running.redis = redis;
  return { writer: createRedisWriter(redis, { prefix: config.prefix, cluster: CLUSTER }) };
}

/** Publishes the folder once, then keeps the cluster's heartbeat going; throws naming what was not published. */
async function publish(
  folder: string,
  serviceCount: number,
  what: {
    readonly cache: ClusterCache;
    readonly writer: ClusterWriter;
    readonly tlsStoreKey?: Uint8Array | undefined;
  },
): Promise<void> {
  const pipeline = createPublishPipeline({
    ...what,
    // examples/ is explicit desired state: nothing to hold back.
    valve: { ...DEFAULT_VALVE_CONFIG, holdMs: 0 },
    holder: "npm-start",
    leaseMs: LEASE_MS,
    logger,
    metrics: createSyncMetrics({ cluster: CLUSTER }),
  });
  running.pipeline = pipeline;
  if ((await pipeline.publishOnce()) > 0) {
    const { services, routes } = pipeline.reconciler.unpublished;
    const unpublished = `${services} of the ${serviceCount} Services${routes ? " and the routes" : ""}`;
    throw new Error(`could not publish ${unpublished} of ${folder}; the lines before say why`);
  }
  pipeline.heartbeat.start();
}

/** Every (loopback ip, port) the example slices list, once, with the Service it belongs to. */
function demoTargets(slices: readonly KubeEndpointSlice[]): { service: string; ip: string; port: number }[] {
  const targets = new Map<string, { service: string; ip: string; port: number }>();
  for (const slice of slices) {
    const service = `${namespaceOf(slice)}/${slice.metadata.labels?.[SERVICE_NAME_LABEL] ?? slice.metadata.name}`;
    for (const endpoint of slice.endpoints ?? []) {
      const ip = endpoint.addresses[0];
      if (ip === undefined || !LOOPBACK.has(ip)) continue;
      for (const port of slice.ports ?? []) {
        if (typeof port.port !== "number" || port.port <= 0) continue;
        targets.set(`${ip} ${port.port}`, { service, ip, port: port.port });
      }
    }
  }
  return [...targets.values()];
}

async function shutdown(signal: string, exitCode: number = EXIT_CODES.ok): Promise<void> {
  const errors: unknown[] = [];
  const attempt = async (step: () => Promise<void> | undefined) => {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  };
  await attempt(() => running.router?.close());
  await attempt(() => running.pipeline?.stop());
  await attempt(async () => {
    await running.redis?.quit();
  });
  await Promise.all(running.backends.map((backend) => attempt(() => backend.close())));
  await attempt(() => running.https?.close());
  for (const error of errors) process.stderr.write(`error while stopping: ${String(error)}\n`);
  process.stdout.write(`stopped (${signal})\n`);
  process.exit(errors.length > 0 && exitCode === EXIT_CODES.ok ? EXIT_CODES.failure : exitCode);
}

function projectRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..");
}

function logLevelOf(text: string | undefined): LogLevel {
  return text === "debug" || text === "info" || text === "error" ? text : "warn";
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void shutdown(signal);
  });
}

const line = readCommandLine(process.argv.slice(2), {
  command: "npm start --",
  options: { https: { type: "boolean", default: false } },
  usage: USAGE,
  version: versionLine(),
  print: (text) => process.stdout.write(text),
  logger,
});
if (!line.run) process.exit(line.exitCode);

main({ https: line.flags.https === true }).catch(async (error: unknown) => {
  const configuration = error instanceof ConfigurationError;
  logger.error(
    configuration
      ? error.message
      : `npm start failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  stopping = true;
  await shutdown("error", configuration ? EXIT_CODES.configuration : EXIT_CODES.failure);
});

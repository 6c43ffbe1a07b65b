import { execFile } from "node:child_process";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { DEFAULT_PREFIX } from "../../store/names.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { freePort, type PrivateRedis, startPrivateRedis } from "../../test/support/redis.js";
import { type Child, startChild } from "../support/child.js";
import { publishBenchRoute } from "./bench-route.js";
import { BENCH_HOST } from "./payloads.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUILT_ROUTER = fileURLToPath(new URL("../../dist/router.js", import.meta.url));
const PROBE = fileURLToPath(new URL("./router-probe.mjs", import.meta.url));
const TSX_ROUTER = fileURLToPath(new URL("./edgeslice-router-process.ts", import.meta.url));

/**
 * How the bench runs the edgeslice router: `built` is what the image ships (`npm run build`, then
 * `node dist/router.js` on a private redis-server holding the bench's one route), `tsx` the development path
 * (`edgeslice-router-process.ts`: startNodeRouter over a MemoryStore, through tsx; its profile names .ts
 * lines). BENCH_ROUTER_RUNNER=tsx chooses it; the default is built.
 */
export type RouterRunner = "built" | "tsx";

export function routerRunnerFromEnv(env: NodeJS.ProcessEnv = process.env): RouterRunner {
  const runner = env.BENCH_ROUTER_RUNNER ?? "built";
  if (runner !== "built" && runner !== "tsx") throw new Error("BENCH_ROUTER_RUNNER must be built or tsx");
  return runner;
}

/** `npm run build` once at bench start, so the bench measures the router the image ships. */
export async function buildRouter(): Promise<void> {
  await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: ROOT });
}

/** A private redis-server holding one fresh cluster whose one Service routes BENCH_HOST to the backend. */
export async function startRouterStore(backendPort: number): Promise<PrivateRedis> {
  const redis = await startPrivateRedis();
  const client = new Redis(redis.url);
  try {
    await publishBenchRoute(
      createRedisWriter(client, { prefix: DEFAULT_PREFIX, cluster: "bench" }),
      backendPort,
    );
  } finally {
    client.disconnect();
  }
  return redis;
}

export interface RouterStart {
  readonly runner: RouterRunner;
  readonly backendPort: number;
  /** redis:// URL of startRouterStore's server (built runner only). */
  readonly redisUrl: string | undefined;
  readonly cpu: number | undefined;
  readonly nodeFlags?: readonly string[];
  /** Extra router environment, e.g. ACCESS_LOG=true (its lines go to /dev/null: stdout is ignored). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts the edgeslice router; resolves once a request for BENCH_HOST is proxied (the first load is done). */
export async function startEdgesliceRouter(start: RouterStart): Promise<{ child: Child; port: number }> {
  if (start.runner === "tsx") {
    const child = startChild(TSX_ROUTER, {
      cpu: start.cpu,
      nodeFlags: ["--import", PROBE, ...(start.nodeFlags ?? [])],
      env: { BENCH_BACKEND_PORT: String(start.backendPort), ...start.env },
      stdout: "ignore",
    });
    const { port } = await child.next<{ port: number }>("ready", 30_000);
    await routable(port);
    return { child, port };
  }
  if (!start.redisUrl) throw new Error("the built router needs the bench's redis-server");
  const port = await freePort();
  const child = startChild(BUILT_ROUTER, {
    cpu: start.cpu,
    runner: "node",
    nodeFlags: ["--import", PROBE, ...(start.nodeFlags ?? [])],
    env: {
      REDIS_URL: start.redisUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      // A port of its own: a second router (--access-log) or anything else on 9901 would stop it starting.
      ADMIN_PORT: "0",
      LOG_LEVEL: "error",
      BENCH_ROUTER_PROBE: "process",
      ...start.env,
    },
    stdout: "ignore",
  });
  await routable(port);
  return { child, port };
}

/** Polls until the router proxies a request for BENCH_HOST (it listens before its first store load). */
async function routable(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if ((await statusOf(port)) === 200) return;
    if (Date.now() > deadline) throw new Error(`router on port ${port} did not route within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The status of GET /small for BENCH_HOST; 0 when the router does not answer yet. */
function statusOf(port: number): Promise<number> {
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

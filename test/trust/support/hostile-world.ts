import { randomBytes } from "node:crypto";
import { readFile, symlink } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { Redis } from "ioredis";
import { routerAclRules, syncAclRules } from "../../../store/acl.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import type { ClusterWriter } from "../../../store/store.js";
import { buildInto, ROOT, type Running, remove, startNode, tempFolder } from "../../build/support/built.js";
import { type PrivateRedis, startPrivateRedis } from "../../support/redis.js";

/**
 * A store shared by several clusters the way README sets one up: a private redis-server, one ACL user per
 * cluster's sync (store/acl.ts syncAclRules) and one for the routers (routerAclRules), and the production
 * build of the router (`npm run build`) started as `node dist/router.js` with only environment variables. A
 * hostile cluster is one whose sync credential the attacker holds: it writes whatever its ACL lets it, through
 * the writer or with raw commands.
 */
export const PREFIX = "edgeslice";

export interface HostileWorld {
  readonly redis: PrivateRedis;
  /** The admin connection (the operator's), for cleanup and checks. */
  readonly admin: Redis;
  /** Each cluster's sync connection, as its own ACL user. */
  sync(cluster: string): Promise<Redis>;
  /** The store's writer over the cluster's own connection (no fence). */
  writer(cluster: string): Promise<ClusterWriter>;
  /** `redis://router:pw@...`: what a router's REDIS_URL says. */
  readonly routerUrl: string;
  /** Starts the built router with these variables (PORT and ADMIN_PORT chosen free); waits until it listens. */
  startRouter(env: Record<string, string>): Promise<BuiltRouter>;
  stop(): Promise<void>;
}

export interface BuiltRouter {
  readonly process: Running;
  readonly url: string;
  readonly port: number;
  readonly adminUrl: string;
  /** `https://127.0.0.1:port` when TLS_STORE_KEY was given. */
  readonly httpsPort: number | undefined;
  /** Resident set size of the router process now, in bytes (/proc). */
  rss(): Promise<number>;
  /** CPU time the router process used so far (user + system), in ms (/proc). */
  cpuMs(): Promise<number>;
  /** Every JSON log line so far. */
  logLines(): Record<string, unknown>[];
  stop(): Promise<void>;
}

export const ADMIN_TOKEN = "hostile-world-admin";

/** Starts Redis, creates the ACL users of `clusters` and the router's, and builds the router once. */
export async function startHostileWorld(clusters: readonly string[]): Promise<HostileWorld> {
  const redis = await startPrivateRedis();
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  const password = (user: string) => `${user}-${randomBytes(6).toString("hex")}`;
  const passwords = new Map<string, string>();
  for (const cluster of clusters) {
    const secret = password(cluster);
    passwords.set(cluster, secret);
    await admin.call("ACL", "SETUSER", `sync-${cluster}`, `>${secret}`, ...syncAclRules(PREFIX, cluster));
  }
  const routerPassword = password("router");
  await admin.call("ACL", "SETUSER", "router", `>${routerPassword}`, ...routerAclRules(PREFIX));
  const dir = await tempFolder("hostile");
  await buildInto(join(dir, "dist"));
  // The bundle's npm packages resolve from the repository's node_modules, as `node dist/router.js` in a checkout.
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const clients: Redis[] = [];
  const routers = new Set<BuiltRouter>();
  const sync = async (cluster: string) => {
    const secret = passwords.get(cluster);
    if (secret === undefined) throw new Error(`no ACL user for ${cluster}`);
    const client = new Redis(redis.url, {
      username: `sync-${cluster}`,
      password: secret,
      maxRetriesPerRequest: 1,
    });
    clients.push(client);
    await client.ping();
    return client;
  };
  const routerUrl = `redis://router:${routerPassword}@127.0.0.1:${redis.port}`;
  return {
    redis,
    admin,
    sync,
    writer: async (cluster) => createRedisWriter(await sync(cluster), { prefix: PREFIX, cluster }),
    routerUrl,
    async startRouter(env) {
      const router = await startBuiltRouter(dir, {
        REDIS_URL: routerUrl,
        EDGESLICE_PREFIX: PREFIX,
        HOST: "127.0.0.1",
        PORT: "0",
        ADMIN_TOKEN,
        LOG_LEVEL: "info",
        ...env,
      });
      routers.add(router);
      return router;
    },
    async stop() {
      await Promise.all([...routers].map((router) => router.stop()));
      for (const client of clients) client.disconnect();
      admin.disconnect();
      await redis.stop();
      await remove(dir);
    },
  };
}

async function startBuiltRouter(dir: string, env: Record<string, string>): Promise<BuiltRouter> {
  const running = startNode(dir, ["dist/router.js"], env);
  const lines = () =>
    running
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const stop = async () => {
    if (running.child.exitCode === null) running.child.kill("SIGTERM");
    await running.finished;
  };
  try {
    await running.waitFor(/"msg":"router listening"/, 20_000);
    if (env.TLS_STORE_KEY) await running.waitFor(/"msg":"router listening for HTTPS"/, 20_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const listening = lines().find((line) => line.msg === "router listening") ?? {};
  const https = lines().find((line) => line.msg === "router listening for HTTPS");
  const url = String(listening.url);
  const pid = running.child.pid ?? 0;
  const status = async (field: string) => {
    const text = await readFile(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
    return Number(match?.[1] ?? 0) * 1024;
  };
  return {
    process: running,
    url,
    port: Number(new URL(url).port),
    adminUrl: String(listening.adminUrl),
    httpsPort: https ? Number(new URL(String(https.url)).port) : undefined,
    rss: () => status("VmRSS"),
    async cpuMs() {
      const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.split(" ") ?? [];
      // utime and stime are fields 14 and 15 of stat (1-based), in clock ticks (100 per second on Linux).
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    logLines: lines,
    stop,
  };
}

export interface Answer {
  readonly status: number;
  readonly backend: string | undefined;
  readonly body: string;
}

/** One GET to the router's PORT with this Host. */
export function get(router: BuiltRouter, host: string, path = "/"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: router.port, path, headers: { host }, timeout: 10_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => {
          const backend = res.headers["x-backend"];
          resolve({
            status: res.statusCode ?? 0,
            backend: typeof backend === "string" ? backend : undefined,
            body,
          });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** The admin endpoint `path` (`/_edgeslice/...`) as JSON. */
export async function adminJson<T>(router: BuiltRouter, path: string): Promise<T> {
  const response = await fetch(`${router.adminUrl}${path}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (await response.json()) as T;
}

/** The admin metrics exposition. */
export async function metricsText(router: BuiltRouter): Promise<string> {
  const response = await fetch(`${router.adminUrl}/_edgeslice/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return response.text();
}

/** Polls `read` until `check` holds (or `timeoutMs` passes, then throws with the last value). */
export async function until<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`never held; last: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

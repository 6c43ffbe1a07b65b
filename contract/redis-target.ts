/** Where the store lives: one Redis endpoint (standalone or a primary), or the seed nodes of a Redis Cluster. */
export type RedisTarget = StandaloneTarget | ClusterTarget;

export interface StandaloneTarget {
  readonly kind: "standalone";
  readonly url: string;
}

export interface ClusterTarget {
  readonly kind: "cluster";
  /** Seed nodes; the client learns the rest of the cluster from them (CLUSTER SLOTS). */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
}

const DEFAULT_PORT = 6379;

/**
 * Reads `REDIS_URL` (and `REDIS_CLUSTER`). Standalone: one `redis://` or `rediss://` URL, handed to ioredis as
 * is. Cluster: a comma list of seed node URLs; credentials and TLS are the first URL's, since every node of a
 * Redis Cluster shares them (ACL users must exist on each node). Throws an error naming the bad part.
 */
export function redisTarget(url: string, cluster: boolean): RedisTarget {
  const parts = url
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  if (parts.length === 0) throw new Error("REDIS_URL is empty");
  const parsed = parts.map(parseRedisUrl);
  if (!cluster) {
    if (parts.length > 1)
      throw new Error("REDIS_URL lists several nodes: set REDIS_CLUSTER=true for Redis Cluster");
    return { kind: "standalone", url: parts[0] ?? "" };
  }
  const first = parsed[0];
  if (!first) throw new Error("REDIS_URL is empty");
  if (first.database !== 0) throw new Error("REDIS_URL: Redis Cluster has only database 0");
  return {
    kind: "cluster",
    nodes: parsed.map(({ host, port }) => ({ host, port })),
    username: first.username,
    password: first.password,
    tls: first.tls,
  };
}

/** redisTarget for a configuration parser: the error names the configuration, as parseEnv's do. */
export function redisTargetOrThrow(url: string, cluster: boolean, what: string): RedisTarget {
  try {
    return redisTarget(url, cluster);
  } catch (error) {
    throw new Error(`invalid ${what} configuration: ${(error as Error).message}`);
  }
}

/** The target for logs: hosts only, never credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === "cluster") {
    return `cluster ${target.nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`).join(",")}`;
  }
  const { hostname, port } = new URL(target.url);
  return `${hostname}:${port || DEFAULT_PORT}`;
}

interface ParsedRedisUrl {
  readonly host: string;
  readonly port: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly database: number;
}

function parseRedisUrl(text: string): ParsedRedisUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`REDIS_URL: "${redacted(text)}" is not a URL`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new Error(`REDIS_URL: "${redacted(text)}" must start with redis:// or rediss://`);
  }
  if (url.hostname === "") throw new Error(`REDIS_URL: "${redacted(text)}" has no host`);
  const database = url.pathname.replace(/^\//, "");
  if (database !== "" && !/^\d+$/.test(database)) {
    throw new Error(`REDIS_URL: "${redacted(text)}" has a database that is not a number`);
  }
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? DEFAULT_PORT : Number(url.port),
    username: url.username === "" ? undefined : decodeURIComponent(url.username),
    password: url.password === "" ? undefined : decodeURIComponent(url.password),
    tls: url.protocol === "rediss:",
    database: database === "" ? 0 : Number(database),
  };
}

/** A URL with its password replaced, for error messages. */
function redacted(text: string): string {
  return text.replace(/:[^:@/]*@/, ":***@");
}

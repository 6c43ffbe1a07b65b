import { ConfigurationError } from "../../lib/configuration-error.js";

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

/** Where the Node router and the sync look for the store when REDIS_URL is unset: a Redis on this machine. */
export const DEFAULT_REDIS_URL = `redis://127.0.0.1:${DEFAULT_PORT}`;

/** The forms REDIS_URL takes, for the errors that tell what to write instead. */
const URL_FORM =
  "redis://user:password@host:6379 (rediss:// for TLS; characters such as / @ : % in the password percent-encoded)";

/**
 * Reads `REDIS_URL` (and `REDIS_CLUSTER`). Standalone: a redis:// or rediss:// URL, or the path of a Unix
 * socket; checked here, then handed to ioredis as written (a comma in the password stays as it is). A bare
 * host name is refused rather than taken as one, so a value that is no URL fails at start, not in endless
 * reconnects. Cluster: a comma list of seed node URLs (a comma inside a password is written `%2C`);
 * credentials and TLS are the first URL's, since every node of a Redis Cluster shares them (ACL users must
 * exist on each node). Errors (ConfigurationError) name the node's position, never the text: it is a secret.
 */
export function redisTarget(url: string, cluster: boolean): RedisTarget {
  if (!cluster) {
    const text = url.trim();
    if (text === "") throw new ConfigurationError(`REDIS_URL is empty: set it to ${URL_FORM}`);
    if (!text.startsWith("/")) parseRedisUrl(text, "REDIS_URL");
    return { kind: "standalone", url: text };
  }
  const parts = url
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  if (parts.length === 0) throw new ConfigurationError(`REDIS_URL is empty: set it to ${URL_FORM}`);
  const parsed = parts.map((part, index) =>
    parseRedisUrl(part, `REDIS_URL node ${index + 1} of ${parts.length}`),
  );
  const first = parsed[0];
  if (!first) throw new ConfigurationError(`REDIS_URL is empty: set it to ${URL_FORM}`);
  if (parsed.some((node) => node.database !== 0))
    throw new ConfigurationError(
      "REDIS_URL: Redis Cluster has only database 0: drop the /database from the URLs",
    );
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
    throw new ConfigurationError(`invalid ${what} configuration: ${(error as Error).message}`);
  }
}

/** The target for logs: hosts only, never credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === "cluster") {
    return `cluster ${target.nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`).join(",")}`;
  }
  try {
    const { protocol, hostname, port } = new URL(target.url);
    if ((protocol === "redis:" || protocol === "rediss:") && hostname !== "") {
      return `${hostname}:${port || DEFAULT_PORT}`;
    }
  } catch {
    // Another form ioredis accepts (a socket path, host:port): say nothing that could be a secret.
  }
  return "REDIS_URL";
}

interface ParsedRedisUrl {
  readonly host: string;
  readonly port: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly database: number;
}

function parseRedisUrl(text: string, which: string): ParsedRedisUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigurationError(`${which} is not a URL: write ${URL_FORM}`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new ConfigurationError(`${which} must start with redis:// or rediss://: write ${URL_FORM}`);
  }
  if (url.hostname === "") throw new ConfigurationError(`${which} has no host: write ${URL_FORM}`);
  const database = url.pathname.replace(/^\//, "");
  if (database !== "" && !/^\d+$/.test(database))
    throw new ConfigurationError(
      `${which} has a database that is not a number: end it with /0, /1, ... or nothing`,
    );
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? DEFAULT_PORT : Number(url.port),
    username: url.username === "" ? undefined : decoded(url.username, which),
    password: url.password === "" ? undefined : decoded(url.password, which),
    tls: url.protocol === "rediss:",
    database: database === "" ? 0 : Number(database),
  };
}

function decoded(text: string, which: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigurationError(
      `${which} has a malformed percent-escape in its credentials: write % itself as %25`,
    );
  }
}

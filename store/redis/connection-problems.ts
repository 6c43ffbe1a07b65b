/**
 * Why a connection to Redis failed, told the way an operator fixes it. ioredis reports a closed port, a wrong
 * password and an unknown host each in its own words ("connect ECONNREFUSED", a WRONGPASS reply, "getaddrinfo
 * ENOTFOUND"); here each becomes one sentence naming REDIS_URL, what failed and the likely fix. Nothing of
 * REDIS_URL is repeated but the host and port: the value holds a password.
 */
export interface RedisProblem {
  /** A short stable name of the failure ("ECONNREFUSED", "WRONGPASS"...): a report logs once per change of it. */
  readonly cause: string;
  /** One sentence: the setting, what failed, what to do. */
  readonly message: string;
  /** Only a change of REDIS_URL or of Redis's ACL cures it; waiting does not. */
  readonly configuration: boolean;
}

/** The fields of a Node system error, of an ioredis reply error and of a Redis Cluster client's error. */
interface ErrorFields {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly hostname?: unknown;
  readonly lastNodeError?: unknown;
}

const CREDENTIALS = "the ACL user and password in REDIS_URL (redis://user:password@host:port)";

/** `where`: the target as logs may show it (describeRedisTarget); an error naming its address wins over it. */
export function redisProblemOf(error: unknown, where: string): RedisProblem {
  const fields = (typeof error === "object" && error !== null ? error : {}) as ErrorFields;
  // A Redis Cluster client gives up with "Failed to refresh slots cache."; the node's own error says why.
  if (fields.lastNodeError !== undefined && fields.lastNodeError !== null) {
    return redisProblemOf(fields.lastNodeError, where);
  }
  const at = typeof fields.address === "string" ? addressOf(fields.address, fields.port) : where;
  const message = typeof fields.message === "string" ? fields.message : String(error);
  const code = typeof fields.code === "string" ? fields.code : replyCode(message);
  const problem = (configuration: boolean, text: string): RedisProblem => ({
    cause: code ?? "error",
    message: `REDIS_URL: ${text}`,
    configuration,
  });
  switch (code) {
    case "ECONNREFUSED":
      return problem(
        false,
        `Redis at ${at} refused the connection (ECONNREFUSED): is Redis running at ${at}?`,
      );
    case "WRONGPASS":
      return problem(true, `Redis at ${at} refused the credentials (WRONGPASS): check ${CREDENTIALS}`);
    case "NOAUTH":
      return problem(true, `Redis at ${at} requires a password (NOAUTH): put ${CREDENTIALS}`);
    case "NOPERM":
      return problem(
        true,
        `the ACL user of REDIS_URL may not run a command edgeslice needs (NOPERM): give it the rules of docs/redis.md "ACL users"`,
      );
    case "ENOTFOUND":
      return problem(
        true,
        `the host name ${typeof fields.hostname === "string" ? fields.hostname : where} does not resolve (ENOTFOUND): check the host name in REDIS_URL`,
      );
    case "EAI_AGAIN":
      return problem(
        false,
        `the host name of Redis at ${where} could not be resolved for now (EAI_AGAIN): check DNS`,
      );
    case "ETIMEDOUT":
      return problem(
        false,
        `Redis at ${at} did not accept the connection in time (ETIMEDOUT): check that the network and firewalls let this process reach it`,
      );
    case "ECONNRESET":
    case "EPIPE":
      return problem(
        false,
        `Redis at ${at} closed the connection (${code}): if it only speaks TLS, REDIS_URL must start with rediss://`,
      );
    case "LOADING":
      return problem(false, `Redis at ${at} is loading its data set (LOADING): it answers once loaded`);
    default:
      if (code !== undefined && isTlsCode(code)) {
        return problem(
          true,
          `the TLS handshake with Redis at ${at} failed (${code}): check its certificate and the host name in REDIS_URL`,
        );
      }
      return problem(false, `Redis at ${at} failed: ${message}`);
  }
}

/** The error code a Redis reply starts with: `WRONGPASS invalid username-password pair...`. */
function replyCode(message: string): string | undefined {
  const word = /^([A-Z][A-Z_]+)\s/.exec(message)?.[1];
  return word === "ERR" ? undefined : word;
}

function addressOf(address: string, port: unknown): string {
  const host = address.includes(":") ? `[${address}]` : address;
  return typeof port === "number" ? `${host}:${port}` : host;
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("CERT_") ||
    code.includes("SELF_SIGNED") ||
    code.startsWith("UNABLE_TO_") ||
    code.startsWith("ERR_SSL_")
  );
}

/**
 * Errors that only say the connection is down: ioredis's refusals while it reconnects ("Stream isn't writeable
 * and enableOfflineQueue options is false", "Connection is closed.", a command out of retries), a socket's
 * failure, and the change feed's own "connection closed". Their cause is what the client's report
 * (connection-report.ts) logs, once, at error level, with the fix.
 */
export function isConnectionDown(error: unknown): boolean {
  const fields = (typeof error === "object" && error !== null ? error : {}) as ErrorFields & {
    readonly name?: unknown;
  };
  const message = typeof fields.message === "string" ? fields.message : "";
  return (
    fields.name === "MaxRetriesPerRequestError" ||
    fields.name === "ClusterAllFailedError" ||
    message.startsWith("Stream isn't writeable") ||
    message === "Connection is closed." ||
    message === "change feed connection closed" ||
    message.startsWith("None of startup nodes is available") ||
    (typeof fields.code === "string" && SOCKET_CODES.has(fields.code))
  );
}

const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * What a line that follows from a failed Redis command (a load, a refresh, a feed read, a write) says about
 * the error: with the connection down, only that Redis is unreachable, since the client's report says why at
 * error level (repeating ioredis's own wording would only hide that line); any other error as it is.
 */
export function redisFailureFields(error: unknown): { readonly error?: unknown; readonly redis?: string } {
  return isConnectionDown(error) ? { redis: "unreachable (the error line before says why)" } : { error };
}

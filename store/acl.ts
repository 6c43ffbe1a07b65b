import { clusterKeysPattern, clustersKeyPattern, storeKeysPattern } from "./keys.js";

/**
 * Redis ACL rules for the store's two kinds of users, as `ACL SETUSER <name> >password ...rules` arguments
 * (docs/redis.md prints them; test/store/documented-acl.test.ts keeps those in step).
 *
 * @example
 * await admin.call("ACL", "SETUSER", "edgeslice-sync-east", ">pw", ...syncAclRules("edgeslice", "east"));
 * await admin.call("ACL", "SETUSER", "edgeslice-router", ">pw", ...routerAclRules("edgeslice"));
 */

/** What an ioredis client sends to connect, on a standalone Redis or (the topology reads) a Redis Cluster. */
const CONNECTION_COMMANDS = [
  "+ping",
  "+hello",
  "+client|setname",
  "+info",
  "+select",
  "+cluster|slots",
  "+cluster|info",
] as const;

/**
 * One cluster's sync user: it may touch only keys under its own hash tag, with the commands the writer uses;
 * nothing else (no KEYS, FLUSHALL, CONFIG ...). One selector (Redis >= 7.0) lets it add names to the registry
 * of clusters (keys.ts clustersKey) and do nothing else there: it cannot remove, overwrite or even read it. No `client|setinfo`: Redis < 7.2 rejects the whole ACL SETUSER
 * over that unknown subcommand, and ioredis ignores the refusal of its optional CLIENT SETINFO handshake anyway.
 */
export function syncAclRules(prefix: string, cluster: string): string[] {
  return [
    "on",
    "resetkeys",
    `~${clusterKeysPattern(prefix, cluster)}`,
    "resetchannels",
    "-@all",
    ...CONNECTION_COMMANDS,
    "+multi",
    "+exec",
    "+discard",
    "+hset",
    "+hdel",
    "+zadd",
    "+zrem",
    "+hgetall",
    "+hget",
    "+hkeys",
    "+xadd",
    "+set",
    "+get",
    "+del",
    "+pexpire",
    "+exists",
    // The certificate version counter (keys.ts certificatesVersion), bumped inside the certificate script.
    "+incr",
    // Every write is one Lua script checking the writer fence (redis/writer.ts): EVALSHA, and EVAL when the
    // server's script cache does not hold it yet. Commands inside a script are still checked against these
    // rules, keys included, so the scripts reach nothing the rules above do not allow.
    "+evalsha",
    "+eval",
    `(~${clustersKeyPattern(prefix)} +sadd)`,
  ];
}

/** Routers: read every key under the prefix (`%R~`), write none. */
export function routerAclRules(prefix: string): string[] {
  return [
    "on",
    "resetkeys",
    `%R~${storeKeysPattern(prefix)}`,
    "resetchannels",
    "-@all",
    ...CONNECTION_COMMANDS,
    "+cluster|keyslot",
    "+scan",
    "+hgetall",
    "+hget",
    "+hmget",
    // The Node router sizes a cluster's hashes and records before it reads them (store/redis/budgeted-reads.ts).
    "+hlen",
    "+hkeys",
    "+hstrlen",
    // A heartbeat record is read at most 4 KiB long (store/redis/heartbeats.ts).
    "+getrange",
    "+get",
    "+mget",
    "+exists",
    "+pttl",
    "+xread",
    "+xrange",
    "+xrevrange",
    "+xinfo|stream",
    // The Workers router: the clusters registry, and one host's routes from a cluster's host index.
    "+smembers",
    "+zrangebylex",
    // Redis' own size of a cluster's hashes: Workers hold hosts, not the store, when it is larger; the Node router
    // reads a cluster whole only when it fits the cluster's budget.
    "+memory|usage",
  ];
}

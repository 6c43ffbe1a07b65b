import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../lib/configuration-error.js";
import { describeRedisTarget, type RedisTarget, redisTarget } from "../../../store/redis/target.js";

describe("redisTarget", () => {
  it.each<[string, string, boolean, RedisTarget]>([
    [
      "one URL is a standalone Redis, passed through as written",
      "redis://user:secret@10.0.0.5:6380/2",
      false,
      { kind: "standalone", url: "redis://user:secret@10.0.0.5:6380/2" },
    ],
    [
      "a cluster seed list takes its credentials and TLS from the first URL",
      "rediss://edge:p%40ss@r1.internal:7000, rediss://r2.internal",
      true,
      {
        kind: "cluster",
        nodes: [
          { host: "r1.internal", port: 7000 },
          { host: "r2.internal", port: 6379 },
        ],
        username: "edge",
        password: "p@ss",
        tls: true,
      },
    ],
    [
      "an IPv6 seed node loses its brackets",
      "redis://[fd00::1]:7001",
      true,
      {
        kind: "cluster",
        nodes: [{ host: "fd00::1", port: 7001 }],
        username: undefined,
        password: undefined,
        tls: false,
      },
    ],
  ])("%s", (_label, url, cluster, expected) => {
    expect(redisTarget(url, cluster)).toEqual(expected);
  });

  it("hands a standalone value to ioredis untouched, a comma or an escaped slash in the password included", () => {
    for (const url of [
      "redis://user:ab,cd@10.0.0.5:6379",
      "rediss://u:s3cr%2Fet@host:6380/2",
      "/run/redis.sock",
    ]) {
      expect(redisTarget(url, false)).toEqual({ kind: "standalone", url });
    }
  });

  it.each<[string, string, RegExp]>([
    [
      "a bare word, which ioredis would take for a host name",
      "hunter2",
      /^REDIS_URL is not a URL: write redis:\/\//,
    ],
    ["host:port without a scheme", "hunter2:6379", /^REDIS_URL must start with redis:\/\/ or rediss:\/\//],
    ["another scheme", "http://u:hunter2@host:6379", /^REDIS_URL must start with redis:\/\//],
    ["a slash in the password, which no URL parser reads", "rediss://u:hunter2/x@host:6380", /is not a URL/],
    ["a database that is not a number", "redis://u:hunter2@host:6379/x", /database that is not a number/],
    ["an empty value", "  ", /^REDIS_URL is empty: set it to redis:\/\//],
  ])("rejects as a standalone REDIS_URL %s, without echoing the value", (_label, url, message) => {
    expect(() => redisTarget(url, false)).toThrow(message);
    expect(() => redisTarget(url, false)).toThrow(ConfigurationError);
    expect(() => redisTarget(url, false)).not.toThrow(/hunter2/);
  });

  it.each<[string, string, RegExp]>([
    ["an empty value", " , ", /empty/],
    [
      "a URL of another scheme",
      "redis://a:7000,http://hunter2@b:6379",
      /node 2 of 2 must start with redis:\/\//,
    ],
    ["a database other than 0 on a cluster", "redis://a:7000,redis://b:7001/3", /only database 0/],
    [
      "a database that is not a number",
      "redis://a:7000/x",
      /node 1 of 1 has a database that is not a number/,
    ],
    ["text that is no URL", "user:hunter2 @nohost", /is not a URL|must start with/],
    ["a password with a slash", "redis://user:hunter2/x@host:7000", /node 1 of 1/],
    ["a malformed percent-escape", "redis://user:hunter2%zz@host:7000", /malformed percent-escape/],
  ])("rejects as a cluster seed list %s, without echoing the value", (_label, url, message) => {
    expect(() => redisTarget(url, true)).toThrow(message);
    expect(() => redisTarget(url, true)).not.toThrow(/hunter2/);
  });

  it("describes a target without its credentials", () => {
    expect(describeRedisTarget(redisTarget("redis://u:secret@10.0.0.5:6380", false))).toBe("10.0.0.5:6380");
    expect(describeRedisTarget(redisTarget("/run/redis.sock?password=secret", false))).toBe("REDIS_URL");
    expect(describeRedisTarget(redisTarget("redis://u:secret@a:7000,redis://[fd00::1]:7001", true))).toBe(
      "cluster a:7000,[fd00::1]:7001",
    );
  });
});

import { describe, expect, it } from "vitest";
import { describeRedisTarget, type RedisTarget, redisTarget } from "../../contract/redis-target.js";

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

  it.each<[string, string, boolean, RegExp]>([
    ["several nodes without REDIS_CLUSTER", "redis://a,redis://b", false, /REDIS_CLUSTER=true/],
    ["an empty value", " , ", true, /empty/],
    ["a URL of another scheme", "http://a:6379", true, /redis:\/\/ or rediss:\/\//],
    ["a database other than 0 on a cluster", "redis://a:7000/3", true, /only database 0/],
    ["a database that is not a number", "redis://a:7000/x", true, /not a number/],
    ["text that is no URL", "not a url", true, /is not a URL/],
    [
      "a URL without its scheme, without echoing its password",
      "user:hunter2@nohost:6379",
      true,
      /redis:\/\//,
    ],
  ])("rejects %s", (_label, url, cluster, message) => {
    expect(() => redisTarget(url, cluster)).toThrow(message);
    expect(() => redisTarget(url, cluster)).not.toThrow(/hunter2/);
  });

  it("describes a target without its credentials", () => {
    expect(describeRedisTarget(redisTarget("redis://u:secret@10.0.0.5:6380", false))).toBe("10.0.0.5:6380");
    expect(describeRedisTarget(redisTarget("redis://u:secret@a:7000,redis://[fd00::1]:7001", true))).toBe(
      "cluster a:7000,[fd00::1]:7001",
    );
  });
});

import { describe, expect, it } from "vitest";
import { redisProblemOf } from "../../../store/redis/connection-problems.js";

/** A Node system error as net and dns raise it. */
function systemError(code: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${code} (as Node words it)`), { code, ...fields });
}

/** A Redis error reply as ioredis rejects with it. */
function reply(text: string): Error {
  return Object.assign(new Error(text), { name: "ReplyError" });
}

describe("redisProblemOf", () => {
  it.each<[string, unknown, { cause: string; message: string; configuration: boolean }]>([
    [
      "a closed port asks whether Redis runs at the address the error names",
      systemError("ECONNREFUSED", { address: "10.0.0.5", port: 6380 }),
      {
        cause: "ECONNREFUSED",
        message:
          "REDIS_URL: Redis at 10.0.0.5:6380 refused the connection (ECONNREFUSED): is Redis running at 10.0.0.5:6380?",
        configuration: false,
      },
    ],
    [
      "a wrong password points at the ACL user and password of REDIS_URL",
      reply("WRONGPASS invalid username-password pair or user is disabled."),
      {
        cause: "WRONGPASS",
        message:
          "REDIS_URL: Redis at redis.internal:6379 refused the credentials (WRONGPASS): check the ACL user and password in REDIS_URL (redis://user:password@host:port)",
        configuration: true,
      },
    ],
    [
      "a missing password says Redis requires one",
      reply("NOAUTH HELLO must be called with the client already authenticated"),
      {
        cause: "NOAUTH",
        message:
          "REDIS_URL: Redis at redis.internal:6379 requires a password (NOAUTH): put the ACL user and password in REDIS_URL (redis://user:password@host:port)",
        configuration: true,
      },
    ],
    [
      "an unknown host name names the host",
      systemError("ENOTFOUND", { hostname: "redis.internal" }),
      {
        cause: "ENOTFOUND",
        message:
          "REDIS_URL: the host name redis.internal does not resolve (ENOTFOUND): check the host name in REDIS_URL",
        configuration: true,
      },
    ],
  ])("%s", (_label, error, expected) => {
    expect(redisProblemOf(error, "redis.internal:6379")).toEqual(expected);
  });

  it("reads a Redis Cluster client's give-up through the last node's error", () => {
    const gaveUp = Object.assign(new Error("Failed to refresh slots cache."), {
      lastNodeError: systemError("ECONNREFUSED", { address: "fd00::7", port: 7000 }),
    });

    expect(redisProblemOf(gaveUp, "cluster a:7000")).toMatchObject({
      cause: "ECONNREFUSED",
      message: expect.stringContaining("Redis at [fd00::7]:7000 refused the connection"),
    });
  });

  it("counts a failed TLS handshake as a setting to fix, and a reset as a possible missing rediss://", () => {
    expect(redisProblemOf(systemError("ERR_SSL_WRONG_VERSION_NUMBER"), "r:6380")).toMatchObject({
      configuration: true,
      message: expect.stringContaining("the TLS handshake with Redis at r:6380 failed"),
    });
    expect(redisProblemOf(systemError("ECONNRESET"), "r:6379")).toMatchObject({
      configuration: false,
      message: expect.stringContaining("REDIS_URL must start with rediss://"),
    });
  });

  it("keeps any other error's own words, under REDIS_URL and the address", () => {
    expect(redisProblemOf(reply("ERR something unforeseen"), "r:6379")).toEqual({
      cause: "error",
      message: "REDIS_URL: Redis at r:6379 failed: ERR something unforeseen",
      configuration: false,
    });
  });
});

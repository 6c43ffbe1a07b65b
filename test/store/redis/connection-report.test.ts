import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createJsonLogger } from "../../../lib/logger.js";
import { reportRedisConnection } from "../../../store/redis/connection-report.js";
import { freePort, startPrivateRedis } from "../../support/redis.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function recordingLogger() {
  const lines: { level: string; msg: string; cause?: string }[] = [];
  const logger = createJsonLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Resolves once the client has emitted `count` 'error' events (each a failed reconnect). */
function errorsSeen(client: Redis, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onError = () => {
      seen++;
      if (seen < count) return;
      client.off("error", onError);
      resolve();
    };
    client.on("error", onError);
  });
}

describe("reportRedisConnection", () => {
  it("logs a refused connection once at error level, however often the client retries", async () => {
    const port = await freePort();
    const client = new Redis(`redis://127.0.0.1:${port}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => 10,
    });
    cleanups.push(() => client.disconnect());
    const { logger, lines } = recordingLogger();
    reportRedisConnection(client, `127.0.0.1:${port}`, logger);

    const retried = errorsSeen(client, 4);
    client.connect().catch(() => {});
    await retried;

    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        msg: `REDIS_URL: Redis at 127.0.0.1:${port} refused the connection (ECONNREFUSED): is Redis running at 127.0.0.1:${port}?`,
        cause: "ECONNREFUSED",
      }),
    ]);
  });

  it("logs again when the connection is back, and when the next outage comes", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const client = new Redis(redis.url, { enableOfflineQueue: false, retryStrategy: () => 20 });
    cleanups.push(() => client.disconnect());
    const { logger, lines } = recordingLogger();
    const report = reportRedisConnection(client, `127.0.0.1:${redis.port}`, logger);
    await new Promise((resolve) => client.once("ready", resolve));

    const failing = errorsSeen(client, 3);
    await redis.stop();
    await failing;
    expect(report.problem?.cause).toBe("ECONNREFUSED");
    const back = new Promise((resolve) => client.once("ready", resolve));
    await redis.start();
    await back;

    expect(report.problem).toBeUndefined();
    expect(lines.map(({ level, cause }) => ({ level, cause }))).toEqual([
      { level: "error", cause: "ECONNREFUSED" },
      { level: "info", cause: undefined },
    ]);
  });
});

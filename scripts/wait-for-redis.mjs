// Exit 0 when Redis answers PING at REDIS_URL within a few seconds, 1 otherwise. Used by .ci/run.
import { Redis } from "ioredis";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const client = new Redis(url, {
  lazyConnect: true,
  connectTimeout: 1000,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
});
client.on("error", () => {});
try {
  await client.connect();
  await client.ping();
  process.exitCode = 0;
} catch {
  process.exitCode = 1;
} finally {
  client.disconnect();
}

import type { Redis } from "ioredis";

/** Calls per command from INFO commandstats (`cmdstat_hset:calls=3,...`), e.g. { hset: 3 }. */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const calls = new Map<string, number>();
  for (const line of info.split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match?.[1] && match[2]) calls.set(match[1], Number(match[2]));
  }
  return calls;
}

/** `after - before` per command, dropping commands that did not run and the INFO calls of the measurement. */
export function commandDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [command, calls] of after) {
    if (command === "info") continue;
    const difference = calls - (before.get(command) ?? 0);
    if (difference > 0) delta.set(command, difference);
  }
  return delta;
}

export function totalCalls(delta: Map<string, number>): number {
  let total = 0;
  for (const calls of delta.values()) total += calls;
  return total;
}

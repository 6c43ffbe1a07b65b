import type { Cluster, Redis } from "ioredis";
import { FenceRefusedError, type WriterFence } from "../store.js";
import { SCRIPTS, type Script } from "./writer-scripts.js";

/** The keys of one cluster a fenced script takes first. */
export interface FenceKeys {
  readonly writer: string;
  readonly claim: string;
}

/**
 * The writer fence of one cluster's Redis writer (store.ts WriterFence), and the fenced scripts every write
 * runs through it. An unfenced writer runs the same scripts with no holder and no TTL (they then ignore the
 * fence); only a writer created with FenceOptions shows this object as its `fence`.
 */
export class RedisWriterFence implements WriterFence {
  readonly holder: string;
  readonly ttlMs: number;
  readonly #redis: Redis | Cluster;
  readonly #keys: FenceKeys;
  readonly #cluster: string;
  /** Who claimed the fence (store.ts WriterFence.claimant), as the last fenced script said. */
  #claimant: string | undefined;

  constructor(
    redis: Redis | Cluster,
    keys: FenceKeys,
    cluster: string,
    fence: { holder: string; ttlMs: number },
  ) {
    this.#redis = redis;
    this.#keys = keys;
    this.#cluster = cluster;
    this.holder = fence.holder;
    this.ttlMs = fence.ttlMs;
  }

  get claimant(): string | undefined {
    return this.#claimant;
  }

  async acquire(claimMs: number): Promise<{ held: true } | { held: false; holder: string }> {
    const { writer, claim } = this.#keys;
    const reply = await runScript(
      this.#redis,
      SCRIPTS.acquire,
      [writer, claim],
      [this.holder, this.ttlMs, claimMs],
    );
    const [status, who] = reply as [number, string];
    if (status === 0) return { held: false, holder: who };
    this.#claimant = who === "" ? undefined : who;
    return { held: true };
  }

  async holderNow(): Promise<string | undefined> {
    return (await this.#redis.get(this.#keys.writer)) ?? undefined;
  }

  async release(): Promise<boolean> {
    return (await runScript(this.#redis, SCRIPTS.release, [this.#keys.writer], [this.holder])) === 1;
  }

  /** Runs a fenced script; resolves its status (1, or 2 from a heartbeat) or rejects a refused write. */
  async run(which: Script, moreKeys: readonly string[], args: readonly (string | number)[]): Promise<number> {
    const { writer, claim } = this.#keys;
    const reply = await runScript(
      this.#redis,
      which,
      [writer, claim, ...moreKeys],
      [this.holder, this.ttlMs, ...args],
    );
    const [status, who] = reply as [number, string];
    if (status === 0) throw new FenceRefusedError(this.#cluster, who);
    this.#claimant = who === "" ? undefined : who;
    return status;
  }
}

/**
 * EVALSHA, and EVAL when the server answers NOSCRIPT (it restarted, or never saw the script): the script
 * cache is per node and empties on restart, so the fallback is the normal path once per node and restart.
 */
async function runScript(
  redis: Redis | Cluster,
  which: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(which.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    return redis.eval(which.text, keys.length, ...keys, ...args);
  }
}

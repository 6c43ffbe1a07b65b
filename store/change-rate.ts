/** CLUSTER_MAX_CHANGES_PER_SECOND's default: far above a sync's own pace, far below what costs a router. */
export const DEFAULT_CHANGES_PER_SECOND = 100;

/** Batches of one cluster's entries are at least this far apart: the latency a change can wait at most for it. */
export const DEFAULT_MIN_INTERVAL_MS = 100;

/**
 * The rate at which a reader applies one cluster's change entries (CLUSTER_MAX_CHANGES_PER_SECOND): a token
 * bucket per cluster, `perSecond` refilled up to `burst`. A batch of entries is always applied whole and may
 * overdraw the bucket; while a cluster's bucket is overdrawn its change stream is not read, so its entries wait
 * in Redis (nothing is lost: a stream trimmed meanwhile reads that cluster whole) and the next read takes all
 * that came, each record they name read once. Batches of one cluster are also at least `minIntervalMs` apart,
 * so a stream that names one large record over and over costs a read of it a few times a second, not once an
 * entry. The bytes a batch reads have a bucket of their own when `bytesPerSecond` is given (spendBytes, burst
 * one second's worth): a stream naming a cluster's large records over and over is read no faster than that,
 * so what reading them again leaves for the garbage collector stays near the cluster's budget a second.
 * Pure: the caller gives the clock.
 */
export class ChangeRate {
  readonly perSecond: number;
  readonly burst: number;
  readonly minIntervalMs: number;
  readonly #entries: TokenBuckets;
  readonly #bytes: TokenBuckets | undefined;

  constructor(
    perSecond: number,
    options: { burst?: number; minIntervalMs?: number; bytesPerSecond?: number | undefined } = {},
  ) {
    this.perSecond = perSecond;
    this.burst = options.burst ?? Math.max(perSecond * 10, 500);
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
    this.#entries = new TokenBuckets(perSecond, this.burst);
    const { bytesPerSecond } = options;
    this.#bytes = bytesPerSecond === undefined ? undefined : new TokenBuckets(bytesPerSecond, bytesPerSecond);
  }

  /** Whether the cluster's stream may be read now. */
  open(cluster: string, now: number): boolean {
    return this.waitMs([cluster], now) === 0;
  }

  /** Applied `entries` of the cluster's stream. */
  spend(cluster: string, entries: number, now: number): void {
    this.#entries.spend(cluster, entries, now);
  }

  /** Read `bytes` of the cluster's records for a batch of its entries. */
  spendBytes(cluster: string, bytes: number, now: number): void {
    if (bytes > 0) this.#bytes?.spend(cluster, bytes, now);
  }

  /** Whether the cluster has spent more than its rate recently: overdrawn, or not yet refilled to the brim. */
  throttled(cluster: string, now: number): boolean {
    return this.#entries.tokens(cluster, now) < 0 || (this.#bytes?.tokens(cluster, now) ?? 0) < 0;
  }

  /** Whether the bucket is full again: the cluster kept within its rate for burst / perSecond seconds. */
  rested(cluster: string, now: number): boolean {
    return (
      this.#entries.tokens(cluster, now) >= this.burst &&
      (this.#bytes === undefined || this.#bytes.tokens(cluster, now) >= this.#bytes.burst)
    );
  }

  /** Milliseconds until the first of these clusters may be read again; 0 when one may be now. */
  waitMs(clusters: readonly string[], now: number): number {
    let wait = Number.POSITIVE_INFINITY;
    for (const cluster of clusters) {
      const refill = Math.max(this.#entries.refillMs(cluster, now), this.#bytes?.refillMs(cluster, now) ?? 0);
      const last = this.#entries.lastSpent(cluster);
      const apart = last === undefined ? 0 : Math.max(0, Math.ceil(last + this.minIntervalMs - now));
      wait = Math.min(wait, Math.max(refill, apart));
    }
    return Number.isFinite(wait) ? wait : 0;
  }
}

/** A token bucket per cluster: `perSecond` refilled up to `burst`, overdrawn by a spend larger than it holds. */
class TokenBuckets {
  readonly perSecond: number;
  readonly burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perSecond: number, burst: number) {
    this.perSecond = perSecond;
    this.burst = burst;
  }

  spend(cluster: string, amount: number, now: number): void {
    this.#buckets.set(cluster, { tokens: this.tokens(cluster, now) - amount, at: now });
  }

  /** When the cluster last spent. */
  lastSpent(cluster: string): number | undefined {
    return this.#buckets.get(cluster)?.at;
  }

  /** Milliseconds until the cluster's bucket is no longer overdrawn. */
  refillMs(cluster: string, now: number): number {
    const tokens = this.tokens(cluster, now);
    return tokens >= 0 ? 0 : Math.ceil((-tokens / this.perSecond) * 1000);
  }

  tokens(cluster: string, now: number): number {
    const bucket = this.#buckets.get(cluster);
    if (!bucket) return this.burst;
    return Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
  }
}

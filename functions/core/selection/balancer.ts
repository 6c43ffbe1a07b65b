import type { Backend } from "./selection.js";

export type BalancingMode = "p2c" | "random";

/**
 * Chooses one backend of a tier. "p2c" (power of two choices, Mitzenmacher 2001): two distinct random
 * backends, the one with fewer requests in flight wins; it needs in-flight counts that outlive a request,
 * so it suits runtimes with long-lived memory (Node). "random" suits runtimes without (Workers).
 */
export class Balancer {
  readonly #inFlight = new Map<string, number>();
  readonly #random: () => number;
  readonly mode: BalancingMode;
  #total = 0;

  constructor(mode: BalancingMode, random: () => number) {
    this.mode = mode;
    this.#random = random;
  }

  /** One of `backends` (non-empty) not in `skip`; undefined when all are skipped. */
  pick(backends: readonly Backend[], skip: ReadonlySet<string>): Backend | undefined {
    const n = backends.length;
    if (skip.size === 0) return this.#pickFrom(backends, n);
    const open: Backend[] = [];
    for (const backend of backends) if (!skip.has(backend.address)) open.push(backend);
    return this.#pickFrom(open, open.length);
  }

  acquire(address: string): void {
    this.#inFlight.set(address, (this.#inFlight.get(address) ?? 0) + 1);
    this.#total++;
  }

  release(address: string): void {
    const count = this.#inFlight.get(address) ?? 0;
    if (count <= 1) this.#inFlight.delete(address);
    else this.#inFlight.set(address, count - 1);
    if (count > 0) this.#total--;
  }

  inFlight(address: string): number {
    return this.#inFlight.get(address) ?? 0;
  }

  totalInFlight(): number {
    return this.#total;
  }

  #pickFrom(backends: readonly Backend[], n: number): Backend | undefined {
    if (n <= 1) return backends[0];
    const first = Math.min(n - 1, Math.floor(this.#random() * n));
    if (this.mode === "random") return backends[first];
    // A second index distinct from the first: draw from the n-1 others.
    let second = Math.min(n - 2, Math.floor(this.#random() * (n - 1)));
    if (second >= first) second++;
    const a = backends[first];
    const b = backends[second];
    if (!a || !b) return a ?? b;
    return this.inFlight(b.address) < this.inFlight(a.address) ? b : a;
  }
}

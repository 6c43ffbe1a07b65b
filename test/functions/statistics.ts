/**
 * P(|X − np| ≥ d) for X ~ Binomial(n, p), summed exactly from the probability mass function: what a test of a
 * random split picks its tolerance by (a bound is justified when this is tiny, e.g. below 1e-6).
 */
export function binomialTail(n: number, p: number, d: number): number {
  let logChoose = 0;
  let tail = 0;
  for (let k = 0; k <= n; k++) {
    if (k > 0) logChoose += Math.log(n - k + 1) - Math.log(k);
    if (Math.abs(k - n * p) >= d) tail += Math.exp(logChoose + k * Math.log(p) + (n - k) * Math.log(1 - p));
  }
  return tail;
}

/**
 * The smallest d with P(|X − np| ≥ d) ≤ alpha for X ~ Binomial(n, p), from binomialTail: a count within
 * np ± d is what a fair draw gives all but alpha of the time (computed exactly, not guessed).
 */
export function binomialBound(n: number, p: number, alpha: number): number {
  // The tail only shrinks as d grows: a binary search over 1..n+1.
  let low = 1;
  let high = n + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (binomialTail(n, p, middle) > alpha) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** mulberry32: a small seeded generator, so a test of random draws is reproducible. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

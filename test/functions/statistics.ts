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

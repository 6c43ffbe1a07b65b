/**
 * An exponentially weighted moving average whose memory decays with time rather than with the number of
 * samples (the irregular-interval EWMA: the previous average weighs e^(−Δt/τ), the new sample 1 − e^(−Δt/τ);
 * the decay Finagle's and Linkerd's peak-EWMA balancers use): under heavy traffic it averages over about τ of
 * samples instead of the last few, and after a quiet spell the next sample counts almost alone.
 *
 * The n-th sample weighs at least 1/n, so the first samples make a plain running mean: one slow first answer
 * (a new connection) is outweighed by the next ones instead of lingering for τ while samples come too close
 * together to move a time-decayed average.
 */
export function decayedAverage(
  previous: number | undefined,
  sample: number,
  elapsedMs: number,
  decayMs: number,
  /** How many samples this one makes, itself included. */
  count: number,
): number {
  if (previous === undefined) return sample;
  const byTime = 1 - Math.exp(-Math.max(0, elapsedMs) / decayMs);
  const weight = Math.max(byTime, 1 / Math.max(1, count));
  return previous + (sample - previous) * weight;
}

import type { LoadResult } from "./load-plan.js";

/** The middle value (the lower one of an even count); NaN for none. */
export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/**
 * One cell's rounds as one result: the round of median rps, with p50 and p99 the medians over every round. At
 * a fixed request rate every round has the same rps, so "the median round by rps" would be an arbitrary one
 * and its p99 whatever that round's noise was; each latency is the median of its own.
 */
export function summariseRounds(results: readonly LoadResult[]): LoadResult | undefined {
  const byRps = [...results].sort((a, b) => a.rps - b.rps);
  const middle = byRps[Math.floor((byRps.length - 1) / 2)];
  if (middle === undefined) return undefined;
  return {
    ...middle,
    p50Ms: medianOf(results.map((result) => result.p50Ms)),
    p99Ms: medianOf(results.map((result) => result.p99Ms)),
  };
}

/**
 * `combine(a[i], b[i])` for every round both targets ran, in round order: two targets compared round by round.
 * Their runs of one round are back to back, so a slow minute of a shared machine weighs on both sides of each
 * pair instead of on whichever target's rounds it happened to fall in; the verdict takes the median of these.
 */
export function pairedRounds(
  a: readonly number[],
  b: readonly number[],
  combine: (a: number, b: number) => number,
): number[] {
  const pairs: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) pairs.push(combine(a[i] as number, b[i] as number));
  return pairs;
}

export const quotient = (a: number, b: number): number => a / b;
export const difference = (a: number, b: number): number => a - b;

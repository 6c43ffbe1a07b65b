/** What the load generator child is asked to do, and what it reports back (latencies in ms, sub-ms resolution). */
export interface LoadPlan {
  readonly url: string;
  readonly host?: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Fixed total request rate (autocannon `overallRate`): measures latency, not saturation. */
  readonly overallRate?: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly bytesPerSecond: number;
}

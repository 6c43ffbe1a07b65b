/** The slice of autocannon 8's programmatic API the bench uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    overallRate?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string | Buffer;
    timeout?: number;
  }

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p99: number;
  }

  interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
    "2xx": number;
  }

  type Instance = EventEmitter & PromiseLike<AutocannonResult> & { stop(): void };

  function autocannon(options: AutocannonOptions): Instance;
  export default autocannon;
}

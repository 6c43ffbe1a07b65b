import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

/** One h2load run (nghttp2's HTTP/2 load generator, Debian package nghttp2-client). */
export interface H2loadPlan {
  /** `host:port` to connect to; the URL's authority is what the requests carry as :authority. */
  readonly connectTo: string;
  readonly url: string;
  readonly clients: number;
  readonly streamsPerClient: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Pin h2load to this CPU with taskset. */
  readonly cpu: number | undefined;
  /** A file each request posts as its body (h2load `-d`), and extra request fields. */
  readonly data?: string;
  readonly headers?: readonly string[];
}

export interface H2loadResult {
  readonly rps: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly non2xx: number;
  /** Mean time per request, ms. */
  readonly meanMs: number;
}

export const H2LOAD = "/usr/bin/h2load";

export function h2loadAvailable(): boolean {
  return existsSync(H2LOAD);
}

export async function runH2load(plan: H2loadPlan): Promise<H2loadResult> {
  const args = [
    `--connect-to=${plan.connectTo}`,
    `--clients=${plan.clients}`,
    `--max-concurrent-streams=${plan.streamsPerClient}`,
    "--threads=1",
    `--duration=${plan.durationSeconds}`,
    ...(plan.warmupSeconds > 0 ? [`--warm-up-time=${plan.warmupSeconds}`] : []),
    ...(plan.data ? [`--data=${plan.data}`] : []),
    ...(plan.headers ?? []).map((field) => `--header=${field}`),
    plan.url,
  ];
  const pinned = plan.cpu !== undefined && existsSync("/usr/bin/taskset");
  const command = pinned ? "/usr/bin/taskset" : H2LOAD;
  const argv = pinned ? ["-c", String(plan.cpu), H2LOAD, ...args] : args;
  const limitMs = (plan.durationSeconds + plan.warmupSeconds + 30) * 1000;
  const { stdout } = await promisify(execFile)(command, argv, { timeout: limitMs, maxBuffer: 1 << 20 });
  return parseH2loadOutput(stdout);
}

/**
 * The figures of h2load's summary: `finished in 8.00s, 12345.67 req/s, ...`, `requests: N total, N started,
 * N done, N succeeded, N failed, ...`, `status codes: N 2xx, N 3xx, N 4xx, N 5xx` and the mean of
 * `time for request:`. Throws when a line is missing (h2load changed, or failed before its summary).
 */
export function parseH2loadOutput(text: string): H2loadResult {
  const rps = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(text);
  const requests = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(text);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(text);
  const time = /time for request:\s+(\S+)\s+(\S+)\s+(\S+)/.exec(text);
  if (!rps || !requests || !codes || !time)
    throw new Error(`h2load printed no summary:\n${text.slice(0, 2000)}`);
  const [, twoXx = "0", threeXx = "0", fourXx = "0", fiveXx = "0"] = codes;
  void twoXx;
  return {
    rps: Number(rps[1]),
    succeeded: Number(requests[1]),
    failed: Number(requests[2]),
    non2xx: Number(threeXx) + Number(fourXx) + Number(fiveXx),
    meanMs: durationMs(time[3] ?? "NaN"),
  };
}

/** h2load's durations: `123us`, `1.23ms`, `1.5s`. */
export function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "ms" ? value : value * 1000;
}

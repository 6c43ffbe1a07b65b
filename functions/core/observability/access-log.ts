import type { IpFamily } from "../../../lib/ip.js";

/**
 * The access log: one JSON object per line on stdout, off by default (ACCESS_LOG), a fraction of requests
 * when ACCESS_LOG_SAMPLE < 1. Whether a request is logged is decided once when it arrives, so an unsampled
 * request costs one random number and nothing is collected for it.
 */
export interface AccessLogEntry {
  /** When the request arrived, ms since the epoch. */
  readonly time: number;
  readonly requestId: string;
  /** The client's address as the runtime saw it; undefined when unknown. */
  readonly client: string | undefined;
  readonly method: string;
  /** The Host the request was routed on (as received). */
  readonly host: string;
  /** Origin-form path and query. */
  readonly path: string;
  /** The HTTP version the client spoke ("1.1", "2.0"); undefined (left out) where the runtime does not say. */
  readonly protocol?: string | undefined;
  readonly status: number;
  /** Response body bytes sent to the client; undefined where the runtime cannot count them. */
  readonly bytes: number | undefined;
  /** From arrival to the last byte of the response (or to its head where the end is not observable). */
  readonly durationMs: number;
  /** `ip:port` of the backend whose answer was sent; undefined when the router answered itself. */
  readonly backend: string | undefined;
  /** Store values: "" when no backend answered (cluster, family) or no route matched (service). */
  readonly cluster: string;
  readonly service: string;
  readonly family: IpFamily | "";
  /** Attempts sent to backends (retries included). */
  readonly attempts: number;
}

export interface AccessLogSettings {
  readonly enabled: boolean;
  /** 0..1: the fraction of requests logged. */
  readonly sample: number;
}

export interface AccessLog {
  /** Whether to log the request that just arrived. */
  sampled(): boolean;
  write(entry: AccessLogEntry): void;
}

/** Longest path and host written; longer ones are cut (Node accepts up to 16 KiB of headers). */
export const MAX_LOGGED_PATH = 2048;
export const MAX_LOGGED_HOST = 255;

/** undefined when the log is off, so the hot path pays one `?.` for it. */
export function createAccessLog(
  settings: AccessLogSettings,
  random: () => number,
  write: (line: string) => void,
): AccessLog | undefined {
  if (!settings.enabled || settings.sample <= 0) return undefined;
  const sample = settings.sample;
  return {
    sampled: sample >= 1 ? () => true : () => random() < sample,
    write: (entry) => write(accessLogLine(entry)),
  };
}

/** One line (no newline), fields in a fixed order; request text is escaped by JSON.stringify. */
export function accessLogLine(entry: AccessLogEntry): string {
  return JSON.stringify({
    kind: "access",
    time: new Date(entry.time).toISOString(),
    requestId: entry.requestId,
    client: entry.client ?? null,
    method: entry.method,
    host: cut(entry.host, MAX_LOGGED_HOST),
    path: cut(entry.path, MAX_LOGGED_PATH),
    protocol: entry.protocol,
    status: entry.status,
    bytes: entry.bytes ?? null,
    durationMs: Math.round(entry.durationMs * 1000) / 1000,
    backend: entry.backend ?? null,
    cluster: entry.cluster,
    service: entry.service,
    family: entry.family,
    attempts: entry.attempts,
  });
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

/**
 * Lines written together once per turn of the event loop (`schedule`: setImmediate on Node) instead of one
 * write each: under load many requests end in one turn, and a write to a pipe is a system call.
 */
export function batchedLines(
  write: (chunk: string) => void,
  schedule: (flush: () => void) => void,
): (line: string) => void {
  let pending = "";
  const flush = () => {
    const chunk = pending;
    pending = "";
    write(chunk);
  };
  return (line) => {
    if (pending === "") schedule(flush);
    pending += `${line}\n`;
  };
}

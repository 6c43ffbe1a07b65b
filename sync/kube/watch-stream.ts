import type { IncomingMessage } from "node:http";
import { statusFields } from "./api-errors.js";
import type { KubeApi } from "./kube-api.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

/** Why a watch ended; the reflector re-watches from its last resourceVersion unless it says `expired`. */
export type WatchEnd =
  /** The server ended it at its timeoutSeconds, as it ends every watch (client-go re-watches at once). */
  | { readonly kind: "timeout" }
  /** The server ended it cleanly before its timeout (a restart, a proxy). */
  | { readonly kind: "closed"; readonly sawBytes: boolean }
  /** No byte for longer than its timeout plus the grace: half-dead (a lost peer, a silent proxy); aborted. */
  | { readonly kind: "stalled" }
  /** Aborted by its owner: `suspect` (it may predate an outage) or `stopped`. */
  | { readonly kind: "aborted"; readonly reason: string }
  /** The resourceVersion can no longer be resumed (an ERROR event with 410 Gone): list again. */
  | { readonly kind: "expired"; readonly message: string }
  /** An ERROR event of another status, or a broken connection. */
  | { readonly kind: "failed"; readonly error: unknown; readonly status?: number };

export interface WatchOptions {
  readonly path: string;
  readonly resourceVersion: string;
  readonly timeoutSeconds: number;
  readonly graceMs: number;
  readonly now: () => number;
  /** Aborts the request, or the open watch (ending it as `aborted`, reason "stopped"). */
  readonly signal: AbortSignal;
  /** Every event but ERROR, in order, with when its line was read. */
  readonly onEvent: (type: WatchEventType, object: unknown, receivedAt: number) => void;
}

export interface OpenWatch {
  readonly startedAt: number;
  /** When the last byte arrived (the start, before any). */
  readonly lastByteAt: number;
  abort(reason: string): void;
  readonly ended: Promise<WatchEnd>;
}

const EXPIRED_REASONS = new Set(["Expired", "Gone"]);

/**
 * One watch request (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes):
 * resumed from `resourceVersion`, bookmarks asked for, a server-side timeoutSeconds. Resolves once the server
 * answered 200; rejects (ApiStatusError, network error) otherwise. A watch the server keeps open but silent
 * longer than its own timeout plus `graceMs` is half-dead and aborted: that bound, not a guess at the bookmark
 * interval, is the stall watchdog, since a quiet resource type gets no bookmarks at all.
 */
export async function openWatch(api: KubeApi, options: WatchOptions): Promise<OpenWatch> {
  const { now } = options;
  const controller = new AbortController();
  const startedAt = now();
  const response: IncomingMessage = await api.stream(
    options.path,
    {
      watch: 1,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: options.timeoutSeconds,
    },
    AbortSignal.any([controller.signal, options.signal]),
  );
  let lastByteAt = now();
  let sawBytes = false;
  let finish: (end: WatchEnd) => void = () => {};
  let ending: WatchEnd | undefined;
  const ended = new Promise<WatchEnd>((resolve) => {
    finish = (end) => {
      ending ??= end;
      clearTimeout(timer);
      resolve(ending);
    };
  });
  const limitMs = options.timeoutSeconds * 1000 + options.graceMs;
  const check = () => {
    const quietMs = now() - lastByteAt;
    if (quietMs < limitMs) {
      timer = setTimeout(check, limitMs - quietMs);
      return;
    }
    stop({ kind: "stalled" });
  };
  let timer = setTimeout(check, limitMs);
  const stop = (end: WatchEnd) => {
    ending ??= end;
    controller.abort();
    response.destroy();
    finish(end);
  };

  const stopped = () => stop({ kind: "aborted", reason: "stopped" });
  if (options.signal.aborted) stopped();
  else options.signal.addEventListener("abort", stopped, { once: true });
  void ended.then(() => options.signal.removeEventListener("abort", stopped));

  let buffered = "";
  response.setEncoding("utf8");
  response.on("data", (chunk: string) => {
    if (ending) return;
    lastByteAt = now();
    sawBytes = true;
    buffered += chunk;
    let newline = buffered.indexOf("\n");
    while (newline >= 0 && !ending) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim() !== "") handleLine(line, lastByteAt);
      newline = buffered.indexOf("\n");
    }
  });
  response.on("end", () => {
    const lastedMs = now() - startedAt;
    // The server's clock and ours differ by the request's latency: allow up to a second of it.
    const timeoutMs = options.timeoutSeconds * 1000;
    const atTimeout = lastedMs >= Math.max(0.9 * timeoutMs, timeoutMs - 1_000);
    finish(atTimeout ? { kind: "timeout" } : { kind: "closed", sawBytes });
  });
  response.on("error", (error) => finish({ kind: "failed", error }));
  response.on("close", () => finish({ kind: "failed", error: new Error("the watch connection closed") }));

  function handleLine(line: string, receivedAt: number): void {
    let event: { type?: unknown; object?: unknown };
    try {
      event = JSON.parse(line) as { type?: unknown; object?: unknown };
    } catch {
      stop({ kind: "failed", error: new Error(`a watch line is not JSON: ${line.slice(0, 100)}`) });
      return;
    }
    if (event.type === "ERROR") {
      const status = statusFields(event.object);
      const message = status.message ?? "watch ERROR event";
      const expired =
        status.code === 410 ||
        (status.reason !== undefined && EXPIRED_REASONS.has(status.reason)) ||
        (status.code === 504 && /too large resource version/i.test(message));
      stop(
        expired
          ? { kind: "expired", message }
          : {
              kind: "failed",
              error: new Error(message),
              ...(status.code === undefined ? {} : { status: status.code }),
            },
      );
      return;
    }
    const type = event.type;
    if (type === "ADDED" || type === "MODIFIED" || type === "DELETED" || type === "BOOKMARK") {
      options.onEvent(type, event.object, receivedAt);
    }
  }

  return {
    startedAt,
    get lastByteAt() {
      return lastByteAt;
    },
    abort: (reason) => stop({ kind: "aborted", reason }),
    ended,
  };
}

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
  const controller = new AbortController();
  const startedAt = options.now();
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
  return new WatchStream(response, controller, startedAt, options);
}

/**
 * An open watch (see openWatch): reads its response line by line into events until it ends, once, for the
 * first reason that comes (#ending): the server's end, an ERROR event, a stall, a broken line or its owner.
 */
class WatchStream implements OpenWatch {
  readonly startedAt: number;
  readonly ended: Promise<WatchEnd>;
  readonly #response: IncomingMessage;
  readonly #controller: AbortController;
  readonly #options: WatchOptions;
  /** No byte for this long means half-dead: the server's timeout plus the grace. */
  readonly #limitMs: number;
  #lastByteAt: number;
  #sawBytes = false;
  /** Why the watch ended; the first reason wins. */
  #ending: WatchEnd | undefined;
  #resolve: (end: WatchEnd) => void = () => {};
  #timer: NodeJS.Timeout;
  /** What arrived after the last full line. */
  #buffered = "";

  constructor(
    response: IncomingMessage,
    controller: AbortController,
    startedAt: number,
    options: WatchOptions,
  ) {
    this.startedAt = startedAt;
    this.#response = response;
    this.#controller = controller;
    this.#options = options;
    this.#lastByteAt = options.now();
    this.ended = new Promise<WatchEnd>((resolve) => {
      this.#resolve = resolve;
    });
    this.#limitMs = options.timeoutSeconds * 1000 + options.graceMs;
    this.#timer = setTimeout(() => this.#check(), this.#limitMs);

    const stopped = () => this.abort("stopped");
    if (options.signal.aborted) stopped();
    else options.signal.addEventListener("abort", stopped, { once: true });
    void this.ended.then(() => options.signal.removeEventListener("abort", stopped));

    response.setEncoding("utf8");
    response.on("data", (chunk: string) => this.#read(chunk));
    response.on("end", () => this.#serverEnded());
    response.on("error", (error) => this.#finish({ kind: "failed", error }));
    response.on("close", () =>
      this.#finish({ kind: "failed", error: new Error("the watch connection closed") }),
    );
  }

  /** When the last byte arrived (the start, before any). */
  get lastByteAt(): number {
    return this.#lastByteAt;
  }

  abort(reason: string): void {
    this.#stop({ kind: "aborted", reason });
  }

  /** Ends the watch from this side: the request is aborted and the response destroyed. */
  #stop(end: WatchEnd): void {
    this.#ending ??= end;
    this.#controller.abort();
    this.#response.destroy();
    this.#finish(end);
  }

  #finish(end: WatchEnd): void {
    this.#ending ??= end;
    clearTimeout(this.#timer);
    this.#resolve(this.#ending);
  }

  /** The stall watchdog: armed for the rest of the bound after each byte. */
  #check(): void {
    const quietMs = this.#options.now() - this.#lastByteAt;
    if (quietMs < this.#limitMs) {
      this.#timer = setTimeout(() => this.#check(), this.#limitMs - quietMs);
      return;
    }
    this.#stop({ kind: "stalled" });
  }

  #read(chunk: string): void {
    if (this.#ending) return;
    this.#lastByteAt = this.#options.now();
    this.#sawBytes = true;
    this.#buffered += chunk;
    let newline = this.#buffered.indexOf("\n");
    while (newline >= 0 && !this.#ending) {
      const line = this.#buffered.slice(0, newline);
      this.#buffered = this.#buffered.slice(newline + 1);
      if (line.trim() !== "") this.#handleLine(line, this.#lastByteAt);
      newline = this.#buffered.indexOf("\n");
    }
  }

  #serverEnded(): void {
    const lastedMs = this.#options.now() - this.startedAt;
    // The server's clock and ours differ by the request's latency: allow up to a second of it.
    const timeoutMs = this.#options.timeoutSeconds * 1000;
    const atTimeout = lastedMs >= Math.max(0.9 * timeoutMs, timeoutMs - 1_000);
    this.#finish(atTimeout ? { kind: "timeout" } : { kind: "closed", sawBytes: this.#sawBytes });
  }

  #handleLine(line: string, receivedAt: number): void {
    let event: { type?: unknown; object?: unknown };
    try {
      event = JSON.parse(line) as { type?: unknown; object?: unknown };
    } catch {
      this.#stop({ kind: "failed", error: new Error(`a watch line is not JSON: ${line.slice(0, 100)}`) });
      return;
    }
    if (event.type === "ERROR") {
      this.#stop(errorEventEnd(event.object));
      return;
    }
    const type = event.type;
    if (type === "ADDED" || type === "MODIFIED" || type === "DELETED" || type === "BOOKMARK") {
      this.#options.onEvent(type, event.object, receivedAt);
    }
  }
}

/** How an ERROR event ends a watch: `expired` (410 Gone, or a resourceVersion too large) or `failed`. */
function errorEventEnd(object: unknown): WatchEnd {
  const status = statusFields(object);
  const message = status.message ?? "watch ERROR event";
  const expired =
    status.code === 410 ||
    (status.reason !== undefined && EXPIRED_REASONS.has(status.reason)) ||
    (status.code === 504 && /too large resource version/i.test(message));
  if (expired) return { kind: "expired", message };
  return {
    kind: "failed",
    error: new Error(message),
    ...(status.code === undefined ? {} : { status: status.code }),
  };
}

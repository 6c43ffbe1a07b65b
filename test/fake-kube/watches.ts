import type { IncomingMessage, ServerResponse } from "node:http";
import { type FakeKind, RESOURCES, type ResourcePath } from "./resources.js";
import { sendJson, writeEvent } from "./responses.js";
import type { ObjectFilter } from "./selectors.js";
import { statusBody } from "./status.js";
import type { ObjectStore, StoredEvent } from "./store.js";

interface OpenWatch {
  readonly kind: FakeKind;
  readonly namespace: string | undefined;
  readonly filter: ObjectFilter;
  readonly response: ServerResponse;
  /** The revision the watch started from: bookmarks only once its kind had a newer event. */
  readonly startRevision: number;
  readonly timers: NodeJS.Timeout[];
  stalled: boolean;
}

/**
 * The fake API server's open WATCH streams: replay from a resourceVersion (or 410 Expired on the stream when
 * it was compacted away), live events, BOOKMARKs for watches that asked for them, the server-side timeout,
 * and the faults a test puts on every open watch at once.
 *
 * As kube-apiserver's watch cache does, a watch gets a BOOKMARK only once the watched resource type had an
 * event newer than the watch's start (the cache's resourceVersion per type moves only with that type's
 * events), carrying that type's latest resourceVersion: a quiet resource type gets no bookmarks at all.
 */
export class WatchHub {
  private readonly watches = new Set<OpenWatch>();
  private readonly holdTimers: NodeJS.Timeout[] = [];
  private store: ObjectStore | undefined;

  constructor(private readonly bookmarkIntervalMs: number) {}

  /** The store whose events the watches stream (set once, right after the store is built). */
  attach(store: ObjectStore): void {
    this.store = store;
  }

  /** A stored event, to every open watch it concerns. */
  publish(event: StoredEvent): void {
    for (const watch of this.watches) this.deliver(watch, event);
  }

  serve(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
    url: URL,
    filter: ObjectFilter,
  ): void {
    const store = this.objects();
    const requested = url.searchParams.get("resourceVersion") ?? "";
    const from = requested === "" || requested === "0" ? undefined : Number(requested);
    if (from !== undefined && !Number.isInteger(from)) {
      sendJson(response, 400, statusBody(400, `invalid resourceVersion ${requested}`));
      return;
    }
    response.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
    response.flushHeaders();
    if (from !== undefined) {
      const replay = store.eventsAfter(from);
      if (!replay) {
        // The API server reports compaction on the stream itself, then closes it (apimachinery watch cache).
        const message = `too old resource version: ${from} (${store.oldestResumableRevision})`;
        writeEvent(response, "ERROR", statusBody(410, message, "Expired"));
        response.end();
        return;
      }
      const watch = this.register(request, response, path, filter, url, from);
      for (const event of replay) this.deliver(watch, event);
      return;
    }
    // resourceVersion unset or "0": synthetic ADDED events for the current state, then live events.
    this.register(request, response, path, filter, url, store.currentRevision);
    for (const object of store.list(path.kind, path.namespace).filter(filter)) {
      writeEvent(response, "ADDED", object);
    }
  }

  /** Watches currently connected (stalled ones included). */
  open(kind?: FakeKind): number {
    return [...this.watches].filter((w) => kind === undefined || w.kind === kind).length;
  }

  /** Destroys every open watch socket (the client sees a premature close, not a clean end). */
  dropAll(): void {
    for (const watch of [...this.watches]) {
      this.watches.delete(watch);
      watch.response.destroy();
    }
  }

  /** Ends every open watch cleanly, as the API server does when a watch's timeout runs out. */
  endAll(): void {
    for (const watch of [...this.watches]) {
      this.watches.delete(watch);
      watch.response.end();
    }
  }

  /**
   * Open watches stay connected but never send another byte, nor end at their timeout (a half-dead
   * connection: a peer that went away, a silent proxy).
   */
  stallAll(): void {
    for (const watch of this.watches) {
      watch.stalled = true;
      for (const timer of watch.timers) clearInterval(timer);
    }
  }

  /**
   * As kube-apiserver on SIGTERM: every open watch is held open and silent for `holdMs`, then its connection
   * is cut (the process exits).
   */
  holdThenDrop(holdMs: number): void {
    this.stallAll();
    const held = [...this.watches];
    this.watches.clear();
    const timer = setTimeout(() => {
      for (const watch of held) watch.response.destroy();
    }, holdMs);
    this.holdTimers.push(timer);
  }

  /** Stops every timer and destroys every watch socket (the server is closing). */
  closeAll(): void {
    for (const timer of this.holdTimers.splice(0)) clearTimeout(timer);
    for (const watch of [...this.watches]) {
      for (const timer of watch.timers) clearInterval(timer);
      watch.response.destroy();
    }
    this.watches.clear();
  }

  private objects(): ObjectStore {
    if (!this.store) throw new Error("WatchHub used before attach(store)");
    return this.store;
  }

  private deliver(watch: OpenWatch, event: StoredEvent): void {
    if (watch.stalled || event.kind !== watch.kind) return;
    if (watch.namespace !== undefined && event.object.metadata.namespace !== watch.namespace) return;
    if (!watch.filter(event.object)) return;
    writeEvent(watch.response, event.type, event.object);
  }

  private register(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
    filter: ObjectFilter,
    url: URL,
    startRevision: number,
  ): OpenWatch {
    const watch: OpenWatch = {
      kind: path.kind,
      namespace: path.namespace,
      filter,
      response,
      startRevision,
      timers: [],
      stalled: false,
    };
    this.watches.add(watch);
    if (url.searchParams.get("allowWatchBookmarks") === "true") {
      const resource = RESOURCES[path.kind];
      const bookmark = setInterval(() => {
        const latest = this.objects().latestRevisionOf(path.kind);
        if (watch.stalled || latest <= watch.startRevision) return;
        writeEvent(response, "BOOKMARK", {
          kind: resource.kind,
          apiVersion: resource.apiVersion,
          metadata: { resourceVersion: String(latest) },
        });
      }, this.bookmarkIntervalMs);
      watch.timers.push(bookmark);
    }
    const timeoutSeconds = Number(url.searchParams.get("timeoutSeconds") ?? "");
    if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) {
      watch.timers.push(setTimeout(() => response.end(), timeoutSeconds * 1000));
    }
    const forget = () => {
      for (const timer of watch.timers) clearInterval(timer);
      this.watches.delete(watch);
    };
    request.on("close", forget);
    response.on("close", forget);
    return watch;
  }
}

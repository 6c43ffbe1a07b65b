import type { Logger } from "../../lib/logger.js";
import { heartbeatsOf, viewsOf } from "../../store/cluster-state.js";
import type {
  ClusterHeartbeat,
  ClusterView,
  Snapshot,
  SnapshotSource,
  SourceStatus,
} from "../../store/store.js";
import type { DeltaReader } from "./delta-reader.js";
import { EMPTY_STATE, type StoreState } from "./delta-state.js";
import { createHostBudget, type HostBudget } from "./host-budget.js";
import { type HostModeState, mergeHostViews } from "./host-mode.js";

export interface DeltaSnapshotSourceOptions {
  readonly reader: DeltaReader;
  readonly ttlMs: number;
  readonly now: () => number;
  readonly logger: Logger;
  /** The host budget in bytes of serialized records; undefined: always read the whole store. */
  readonly hostBudgetBytes?: number | undefined;
}

/**
 * The Workers SnapshotSource: decoded records live in isolate memory (a Redis connection cannot outlive the
 * request that opened it in workerd, docs/design.md router rule 5) and follow the store by deltas
 * (delta-reader.ts):
 * - fresh (younger than `ttlMs`): served from memory, no Redis at all;
 * - past the TTL: served from memory, and a refresh runs after the response (`waitUntil`): one round trip when
 *   nothing changed, the changed records only when something did, one cluster read whole after a gap;
 * - cold isolate: the first request reads what its host needs (three round trips) and is answered from
 *   that; the whole store is read after the response. Until it is in, a request for another host, or for the
 *   admin endpoints, waits for it. A store the host index cannot answer for (a cluster of a sync from before
 *   store format 2) is read whole before the first answer, as before;
 * - with a host budget (host-budget.ts, docs/design.md): after the cold read, Redis' estimate of the store's
 *   size decides. A store within the budget is read whole as above; a larger one puts the isolate in host
 *   mode (host-mode.ts): each new host is read by the cold read before its request is answered, the least
 *   recently used hosts go beyond the budget, and a refresh is one round trip when nothing changed (the held
 *   hosts are read again when something did). The whole store is never read in host mode;
 * - a read fails: what is in memory keeps serving (fail static); with nothing, `current()` gives undefined
 *   (the app answers 503). One read runs at a time; a failed one is not retried before another `ttlMs`.
 */
export class DeltaSnapshotSource implements SnapshotSource {
  readonly #reader: DeltaReader;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #hostBudgetBytes: number | undefined;
  /** The whole store, once read: what refreshes follow. */
  #state: StoreState | undefined;
  #snapshot: Snapshot | undefined;
  /** Hosts the cold read served, while the whole store is not in yet. */
  readonly #coldHosts = new Set<string>();
  #coldAllowed = true;
  #version = 0;
  /** When the last full read or refresh finished, or a cold read failed; undefined before. */
  #attemptedAt: number | undefined;
  #inFlight: Promise<unknown> | undefined;
  #lastLoadAt: number | undefined;
  #connected = false;
  #heartbeats: ReadonlyMap<string, ClusterHeartbeat> = new Map();
  /** Set once the store was found larger than the host budget: the isolate holds hosts, never the store. */
  #hostMode: HostModeState | undefined;
  readonly #budget: HostBudget;
  /** The views each held host's cold read gave. */
  readonly #held = new Map<string, readonly ClusterView[]>();

  constructor(options: DeltaSnapshotSourceOptions) {
    this.#reader = options.reader;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now;
    this.#logger = options.logger;
    this.#hostBudgetBytes = options.hostBudgetBytes;
    this.#budget = createHostBudget(options.hostBudgetBytes ?? Number.POSITIVE_INFINITY);
  }

  current(): Snapshot | undefined {
    return this.#snapshot;
  }

  /** Each cluster's heartbeat record as last read (each refresh reads them: they place the clusters). */
  heartbeats(): ReadonlyMap<string, ClusterHeartbeat> {
    return this.#heartbeats;
  }

  status(): SourceStatus {
    return {
      connected: this.#connected,
      lastLoadAt: this.#lastLoadAt,
      version: this.#snapshot?.version ?? 0,
    };
  }

  /**
   * Call once per request before routing with the request's normalised host (undefined when it needs the
   * whole store: admin endpoints, no host); `waitUntil` is the request's `ctx.waitUntil`.
   */
  async prepare(host: string | undefined, waitUntil: (promise: Promise<unknown>) => void): Promise<void> {
    // Each round either returns or waits for a read that ends; four cover cold read, sizes, then a host.
    for (let round = 0; round < 4; round++) {
      if (this.#state) {
        // Only the request that starts a refresh keeps it alive: its I/O belongs to that request.
        if (this.#due() && !this.#inFlight) waitUntil(this.#refresh(this.#state));
        return;
      }
      if (this.#hostMode) return this.#prepareHeld(this.#hostMode, host, waitUntil);
      if (await this.#prepareCold(host, waitUntil)) return;
    }
  }

  /** Host mode: admin endpoints see the hosts held; a new host waits for what is in flight, then its cold read. */
  async #prepareHeld(
    hostMode: HostModeState,
    host: string | undefined,
    waitUntil: (promise: Promise<unknown>) => void,
  ): Promise<void> {
    if (host === undefined || this.#budget.touch(host)) {
      if (this.#due() && !this.#inFlight) waitUntil(this.#refreshHosts(hostMode));
      return;
    }
    while (this.#inFlight) await this.#inFlight;
    if (!this.#budget.touch(host)) await this.#loadHost(host);
  }

  /** Before the whole store is in; false when the request must look again after the read it waited for. */
  async #prepareCold(
    host: string | undefined,
    waitUntil: (promise: Promise<unknown>) => void,
  ): Promise<boolean> {
    const servedCold = host !== undefined && this.#coldHosts.has(host);
    if (this.#inFlight) {
      if (servedCold) return true;
      await this.#inFlight;
      return false;
    }
    if (!this.#due()) return true;
    if (host !== undefined && this.#snapshot === undefined && this.#coldAllowed) {
      if (!(await this.#readCold(host))) return false;
      if (!this.#inFlight)
        waitUntil(this.#hostBudgetBytes === undefined ? this.#readWhole() : this.#readWholeOrHosts());
      return true;
    }
    // The whole read failed after a cold answer: that host keeps its records while it is tried again.
    if (servedCold) waitUntil(this.#readWhole());
    else await this.#readWhole();
    return true;
  }

  #due(): boolean {
    return this.#attemptedAt === undefined || this.#now() - this.#attemptedAt >= this.#ttlMs;
  }

  #publish(clusters: readonly ClusterView[]): void {
    this.#version++;
    this.#snapshot = { version: this.#version, clusters };
  }

  /** A read failed: what is in memory keeps serving (fail static). */
  readonly #failed = (error: unknown): void => {
    this.#connected = false;
    this.#logger.warn(this.#snapshot ? "store read failed; serving the last known" : "store read failed", {
      error,
    });
  };

  /** The one read in flight; `attempt`: its end counts as an attempt for the TTL. */
  #track<T>(work: Promise<T>, attempt: boolean): Promise<T> {
    const tracked = work.finally(() => {
      if (attempt) this.#attemptedAt = this.#now();
      this.#inFlight = undefined;
    });
    this.#inFlight = tracked;
    return tracked;
  }

  #succeeded(): void {
    this.#lastLoadAt = this.#now();
    this.#connected = true;
  }

  #applyWhole(next: StoreState): void {
    this.#state = next;
    this.#heartbeats = heartbeatsOf(next.clusters);
    this.#publish(viewsOf(next.clusters));
    this.#coldHosts.clear();
    this.#succeeded();
    this.#logger.debug("store read whole", { clusters: next.clusters.size, version: this.#version });
  }

  #readWhole(): Promise<void> {
    const read = this.#reader.full(this.#state ?? EMPTY_STATE);
    return this.#track(
      read.then((next) => this.#applyWhole(next), this.#failed),
      true,
    );
  }

  /** Reads `host` by the cold read and holds it, evicting beyond the budget (never `keep`). */
  async #holdHost(host: string, keep: string | undefined): Promise<void> {
    const result = await this.#reader.cold(host);
    if (!("views" in result)) {
      this.#logger.warn("a host's records could not be read", { host, reason: result.incomplete });
      this.#held.delete(host);
      this.#budget.release(host);
      return;
    }
    this.#held.set(host, result.views);
    this.#budget.hold(host, result.bytes);
    this.#heartbeats = new Map([...this.#heartbeats, ...result.heartbeats]);
    for (const evicted of this.#budget.evict(keep)) this.#held.delete(evicted);
  }

  #publishHeld(): void {
    this.#publish(mergeHostViews(this.#held.values()));
  }

  /** After a cold answer: the whole store when it fits the budget, host mode when it does not. */
  #readWholeOrHosts(): Promise<void> {
    const read = this.#reader.sizes().then(async ({ bytes, state: positions }) => {
      const budget = this.#hostBudgetBytes;
      if (budget === undefined || bytes <= budget) {
        this.#applyWhole(await this.#reader.full(this.#state ?? EMPTY_STATE));
        return;
      }
      this.#logger.info("store larger than the host budget: holding the hosts asked for", { bytes, budget });
      this.#hostMode = positions;
      // The cold reads came before these positions: read them again after, so no change falls between.
      for (const host of this.#coldHosts) await this.#holdHost(host, host);
      this.#coldHosts.clear();
      this.#publishHeld();
      this.#succeeded();
    }, this.#failed);
    return this.#track(read, true);
  }

  #loadHost(host: string): Promise<void> {
    const read = this.#holdHost(host, host).then(() => {
      this.#publishHeld();
      this.#connected = true;
    }, this.#failed);
    return this.#track(read, false);
  }

  #refreshHosts(current: HostModeState): Promise<void> {
    const read = this.#reader.hostRefresh(current).then(async (outcome) => {
      this.#hostMode = outcome.state;
      if (outcome.changed !== undefined) {
        this.#logger.debug("reading the held hosts again", {
          reason: outcome.changed,
          hosts: this.#held.size,
        });
        const hosts = this.#budget.hosts().reverse();
        for (const host of hosts) await this.#holdHost(host, hosts[0]);
        this.#publishHeld();
      }
      this.#succeeded();
    }, this.#failed);
    return this.#track(read, true);
  }

  #refresh(current: StoreState): Promise<void> {
    const read = this.#reader.refresh(current).then((outcome) => {
      this.#state = outcome.state;
      this.#heartbeats = heartbeatsOf(outcome.state.clusters);
      if (outcome.changed) this.#publish(viewsOf(outcome.state.clusters));
      this.#succeeded();
    }, this.#failed);
    return this.#track(read, true);
  }

  /** True when the host is now served from the cold read. */
  #readCold(host: string): Promise<boolean> {
    const read = this.#reader.cold(host).then(
      (result) => {
        if ("views" in result) {
          this.#coldHosts.add(host);
          this.#heartbeats = result.heartbeats;
          this.#publish(result.views);
          this.#connected = true;
          return true;
        }
        this.#coldAllowed = false;
        this.#logger.info("the first request waits for the whole store", { reason: result.incomplete });
        return false;
      },
      (error: unknown) => {
        this.#failed(error);
        this.#attemptedAt = this.#now();
        return false;
      },
    );
    return this.#track(read, false);
  }
}

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
import { createHostBudget } from "./host-budget.js";
import { type HostModeState, mergeHostViews } from "./host-mode.js";

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
export interface DeltaSnapshotSource extends SnapshotSource {
  current(): Snapshot | undefined;
  status(): SourceStatus;
  /** Each cluster's heartbeat record as last read (each refresh reads them: they place the clusters). */
  heartbeats(): ReadonlyMap<string, ClusterHeartbeat>;
  /**
   * Call once per request before routing with the request's normalised host (undefined when it needs the
   * whole store: admin endpoints, no host); `waitUntil` is the request's `ctx.waitUntil`.
   */
  prepare(host: string | undefined, waitUntil: (promise: Promise<unknown>) => void): Promise<void>;
}

export interface DeltaSnapshotSourceOptions {
  readonly reader: DeltaReader;
  readonly ttlMs: number;
  readonly now: () => number;
  readonly logger: Logger;
  /** The host budget in bytes of serialized records; undefined: always read the whole store. */
  readonly hostBudgetBytes?: number | undefined;
}

export function createDeltaSnapshotSource(options: DeltaSnapshotSourceOptions): DeltaSnapshotSource {
  const { reader, ttlMs, now, logger, hostBudgetBytes } = options;
  /** The whole store, once read: what refreshes follow. */
  let state: StoreState | undefined;
  let snapshot: Snapshot | undefined;
  /** Hosts the cold read served, while the whole store is not in yet. */
  const coldHosts = new Set<string>();
  let coldAllowed = true;
  let version = 0;
  /** When the last full read or refresh finished, or a cold read failed; undefined before. */
  let attemptedAt: number | undefined;
  let inFlight: Promise<unknown> | undefined;
  let lastLoadAt: number | undefined;
  let connected = false;
  let heartbeats: ReadonlyMap<string, ClusterHeartbeat> = new Map();
  /** Set once the store was found larger than the host budget: the isolate holds hosts, never the store. */
  let hostMode: HostModeState | undefined;
  const budget = createHostBudget(hostBudgetBytes ?? Number.POSITIVE_INFINITY);
  /** The views each held host's cold read gave. */
  const held = new Map<string, readonly ClusterView[]>();

  const publish = (clusters: readonly ClusterView[]) => {
    version++;
    snapshot = { version, clusters };
  };
  const failed = (error: unknown) => {
    connected = false;
    logger.warn(snapshot ? "store read failed; serving the last known" : "store read failed", { error });
  };
  const track = <T>(work: Promise<T>, attempt: boolean): Promise<T> => {
    const tracked = work.finally(() => {
      if (attempt) attemptedAt = now();
      inFlight = undefined;
    });
    inFlight = tracked;
    return tracked;
  };
  const succeeded = () => {
    lastLoadAt = now();
    connected = true;
  };

  const applyWhole = (next: StoreState) => {
    state = next;
    heartbeats = heartbeatsOf(next.clusters);
    publish(viewsOf(next.clusters));
    coldHosts.clear();
    succeeded();
    logger.debug("store read whole", { clusters: next.clusters.size, version });
  };
  const readWhole = () => track(reader.full(state ?? EMPTY_STATE).then(applyWhole, failed), true);

  /** Reads `host` by the cold read and holds it, evicting beyond the budget (never `keep`). */
  const holdHost = async (host: string, keep: string | undefined) => {
    const result = await reader.cold(host);
    if (!("views" in result)) {
      logger.warn("a host's records could not be read", { host, reason: result.incomplete });
      held.delete(host);
      budget.release(host);
      return;
    }
    held.set(host, result.views);
    budget.hold(host, result.bytes);
    heartbeats = new Map([...heartbeats, ...result.heartbeats]);
    for (const evicted of budget.evict(keep)) held.delete(evicted);
  };
  const publishHeld = () => publish(mergeHostViews(held.values()));

  /** After a cold answer: the whole store when it fits the budget, host mode when it does not. */
  const readWholeOrHosts = () =>
    track(
      reader.sizes().then(async ({ bytes, state: positions }) => {
        if (hostBudgetBytes === undefined || bytes <= hostBudgetBytes) {
          applyWhole(await reader.full(state ?? EMPTY_STATE));
          return;
        }
        logger.info("store larger than the host budget: holding the hosts asked for", {
          bytes,
          budget: hostBudgetBytes,
        });
        hostMode = positions;
        // The cold reads came before these positions: read them again after, so no change falls between.
        for (const host of coldHosts) await holdHost(host, host);
        coldHosts.clear();
        publishHeld();
        succeeded();
      }, failed),
      true,
    );

  const loadHost = (host: string) =>
    track(
      holdHost(host, host).then(() => {
        publishHeld();
        connected = true;
      }, failed),
      false,
    );

  const refreshHosts = (current: HostModeState) =>
    track(
      reader.hostRefresh(current).then(async (outcome) => {
        hostMode = outcome.state;
        if (outcome.changed !== undefined) {
          logger.debug("reading the held hosts again", { reason: outcome.changed, hosts: held.size });
          const hosts = budget.hosts().reverse();
          for (const host of hosts) await holdHost(host, hosts[0]);
          publishHeld();
        }
        succeeded();
      }, failed),
      true,
    );

  const refresh = (current: StoreState) =>
    track(
      reader.refresh(current).then((outcome) => {
        state = outcome.state;
        heartbeats = heartbeatsOf(outcome.state.clusters);
        if (outcome.changed) publish(viewsOf(outcome.state.clusters));
        succeeded();
      }, failed),
      true,
    );

  /** True when the host is now served from the cold read. */
  const readCold = (host: string) =>
    track(
      reader.cold(host).then(
        (result) => {
          if ("views" in result) {
            coldHosts.add(host);
            heartbeats = result.heartbeats;
            publish(result.views);
            connected = true;
            return true;
          }
          coldAllowed = false;
          logger.info("the first request waits for the whole store", { reason: result.incomplete });
          return false;
        },
        (error: unknown) => {
          failed(error);
          attemptedAt = now();
          return false;
        },
      ),
      false,
    );

  const due = (): boolean => attemptedAt === undefined || now() - attemptedAt >= ttlMs;

  return {
    current: () => snapshot,
    heartbeats: () => heartbeats,
    status: () => ({ connected, lastLoadAt, version: snapshot?.version ?? 0 }),
    async prepare(host, waitUntil) {
      // Each round either returns or waits for a read that ends; four cover cold read, sizes, then a host.
      for (let round = 0; round < 4; round++) {
        if (state) {
          // Only the request that starts a refresh keeps it alive: its I/O belongs to that request.
          if (due() && !inFlight) waitUntil(refresh(state));
          return;
        }
        if (hostMode) {
          // Admin endpoints see the hosts held; a new host waits for what is in flight, then its cold read.
          if (host === undefined || budget.touch(host)) {
            if (due() && !inFlight) waitUntil(refreshHosts(hostMode));
            return;
          }
          while (inFlight) await inFlight;
          if (!budget.touch(host)) await loadHost(host);
          return;
        }
        const servedCold = host !== undefined && coldHosts.has(host);
        if (inFlight) {
          if (servedCold) return;
          await inFlight;
          continue;
        }
        if (!due()) return;
        if (host !== undefined && snapshot === undefined && coldAllowed) {
          if (await readCold(host)) {
            if (!inFlight) waitUntil(hostBudgetBytes === undefined ? readWhole() : readWholeOrHosts());
            return;
          }
          continue;
        }
        // The whole read failed after a cold answer: that host keeps its records while it is tried again.
        if (servedCold) waitUntil(readWhole());
        else await readWhole();
        return;
      }
    },
  };
}

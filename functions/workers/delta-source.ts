import type { Logger } from "../../lib/logger.js";
import type {
  ClusterHeartbeat,
  ClusterView,
  Snapshot,
  SnapshotSource,
  SourceStatus,
} from "../../store/store.js";
import type { DeltaReader } from "./delta-reader.js";
import { EMPTY_STATE, heartbeatsOf, type StoreState, snapshotOf } from "./delta-state.js";

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
}

export function createDeltaSnapshotSource(options: DeltaSnapshotSourceOptions): DeltaSnapshotSource {
  const { reader, ttlMs, now, logger } = options;
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

  const readWhole = () =>
    track(
      reader.full(state ?? EMPTY_STATE).then((next) => {
        state = next;
        heartbeats = heartbeatsOf(next);
        publish(snapshotOf(next, 0).clusters);
        coldHosts.clear();
        succeeded();
        logger.debug("store read whole", { clusters: next.clusters.size, version });
      }, failed),
      true,
    );

  const refresh = (current: StoreState) =>
    track(
      reader.refresh(current).then((outcome) => {
        state = outcome.state;
        heartbeats = heartbeatsOf(outcome.state);
        if (outcome.changed) publish(snapshotOf(outcome.state, 0).clusters);
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
      // Each round either returns or waits for a read that ends; three cover cold read, then whole read.
      for (let round = 0; round < 3; round++) {
        if (state) {
          // Only the request that starts a refresh keeps it alive: its I/O belongs to that request.
          if (due() && !inFlight) waitUntil(refresh(state));
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
            if (!inFlight) waitUntil(readWhole());
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

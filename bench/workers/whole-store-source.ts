import type { Logger } from "../../lib/logger.js";
import type { Snapshot, SnapshotSource, SourceStatus } from "../../store/store.js";

/**
 * A whole-store SnapshotSource for Workers, the baseline the Workers bench measures the shipped delta source
 * (functions/workers/delta-source.ts) against. A Redis connection cannot outlive the request that opened it in
 * workerd (docs/design.md, router rule 5), so the decoded snapshot lives in isolate memory and is reloaded with
 * a client of the request's own:
 * - fresh (younger than `ttlMs`): served from memory, no Redis at all;
 * - past the TTL: the cached one is served and a reload runs after the response (`waitUntil`);
 * - nothing cached (cold isolate): the request waits for the load;
 * - a load fails: the last known snapshot stays; with none, `current()` gives undefined (the app answers 503).
 * One load runs at a time; a failed load is not retried before another `ttlMs` has passed.
 */
export interface WorkerSnapshotSource extends SnapshotSource {
  current(): Snapshot | undefined;
  status(): SourceStatus;
  /** Call once per request before routing; `waitUntil` is the request's `ctx.waitUntil`. */
  prepare(waitUntil: (promise: Promise<unknown>) => void): Promise<void>;
}

export interface WorkerSnapshotSourceOptions {
  /** Loads a whole snapshot with a client opened and closed inside the call; `version` is the one to stamp. */
  readonly load: (version: number) => Promise<Snapshot>;
  readonly ttlMs: number;
  readonly now: () => number;
  readonly logger: Logger;
}

export function createWorkerSnapshotSource(options: WorkerSnapshotSourceOptions): WorkerSnapshotSource {
  const { load, ttlMs, now, logger } = options;
  let snapshot: Snapshot | undefined;
  /** When the last load attempt finished, successful or not; undefined before the first. */
  let attemptedAt: number | undefined;
  let inFlight: Promise<void> | undefined;
  let nextVersion = 1;
  let lastLoadAt: number | undefined;
  let connected = false;

  const reload = (): Promise<void> => {
    if (inFlight) return inFlight;
    const version = nextVersion++;
    const started = now();
    inFlight = load(version)
      .then(
        (loaded) => {
          snapshot = loaded;
          lastLoadAt = now();
          connected = true;
          logger.debug("snapshot loaded", { version, ms: now() - started });
        },
        (error: unknown) => {
          connected = false;
          logger.warn(snapshot ? "snapshot reload failed; serving the last known" : "snapshot load failed", {
            error,
          });
        },
      )
      .finally(() => {
        attemptedAt = now();
        inFlight = undefined;
      });
    return inFlight;
  };

  const due = (): boolean => attemptedAt === undefined || now() - attemptedAt >= ttlMs;

  return {
    current: () => snapshot,
    status: () => ({ connected, lastLoadAt, version: snapshot?.version ?? 0 }),
    async prepare(waitUntil) {
      if (!due()) return;
      if (snapshot) {
        // Only the request that starts a reload keeps it alive: its I/O belongs to that request.
        if (!inFlight) waitUntil(reload());
        return;
      }
      await reload();
    },
  };
}

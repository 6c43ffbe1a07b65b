import type { Logger } from "../../lib/logger.js";
import { observeCluster, REGAINED } from "../cluster-state.js";
import { clusterKeys } from "../keys.js";
import { NOT_GRANTED } from "../record-budget.js";
import type { BudgetedCluster } from "./budgeted-load.js";
import type { ClusterTable, SourceReads } from "./cluster-table.js";
import { redisFailureFields } from "./connection-problems.js";
import { readHeartbeats } from "./heartbeats.js";
import { pipelineValues } from "./replies.js";

/**
 * One periodic pass over what the change feeds do not announce: each cluster's lease (stale or fresh), a
 * heartbeat that vanished or came back, new clusters; the first full load when none succeeded yet.
 */
export async function refreshLeases(table: ClusterTable, reads: SourceReads): Promise<void> {
  if (!table.snapshot) return table.reloadAll();
  const { redis, prefix, logger, warnings, now } = reads;
  const names = await reads.discovery.names();
  const known = [...table.clusters.keys()];
  // One command per cluster, sent together: each lease lives in its own slot, which a Redis Cluster pipeline
  // cannot span; on a standalone Redis ioredis writes them back to back all the same.
  const [leases, beats] = await Promise.all([
    Promise.all(known.map((name) => redis.exists(clusterKeys(prefix, name).lease))),
    readHeartbeats(redis, prefix, known, warnings),
  ]);
  table.heartbeats = beats;
  let changed = false;
  const regained: string[] = [];
  known.forEach((name, index) => {
    const state = table.clusters.get(name);
    if (!state) return;
    const observed = observeCluster(state, { heartbeat: names.includes(name), lease: leases[index] === 1 });
    if (observed.kind === "regained") {
      regained.push(name);
      return;
    }
    // Throttled until its bucket is full again: it kept within its change rate for a while (change-rate.ts).
    const rested = state.view.budget?.throttled === true && reads.rate.rested(name, now());
    if (!observed.changed && !rested) return;
    const next = rested ? rest(observed.state) : observed.state;
    table.clusters.set(name, next);
    if (next.view.stale !== state.view.stale)
      logger.info(next.view.stale ? "cluster went stale" : "cluster is fresh again", { cluster: name });
    changed = true;
  });
  for (const name of regained) await table.reloadCluster(name, REGAINED);
  for (const name of names) {
    if (table.clusters.has(name)) continue;
    const state = await table.load(name);
    if (state) {
      table.clusters.set(name, state);
      logger.info("cluster discovered", { cluster: name });
      changed = true;
    }
  }
  if (await recountUnread(table, reads)) changed = true;
  table.lastLoadAt = now();
  if (changed) table.publish();
}

/** The cluster no longer throttled (its view's budget report says so). */
function rest(state: BudgetedCluster): BudgetedCluster {
  const budget = state.view.budget && { ...state.view.budget, throttled: undefined };
  return { ...state, view: { ...state.view, budget } };
}

/**
 * The records of each cluster left unread (CLUSTER_GRANTS does not list it: its stream is not followed) are
 * counted again, so explain says what it publishes: two HLENs, never a read of a record.
 */
async function recountUnread(table: ClusterTable, reads: SourceReads): Promise<boolean> {
  const unread = [...table.clusters.values()].filter((state) => state.view.budget?.unread === NOT_GRANTED);
  const counts = await Promise.all(
    unread.map(async ({ view }) => {
      const keys = clusterKeys(reads.prefix, view.name);
      const [services, routes] = pipelineValues(
        await reads.redis.pipeline().hlen(keys.services).hlen(keys.routes).exec(),
        2,
      );
      return Number(services) + Number(routes);
    }),
  );
  let changed = false;
  unread.forEach((state, index) => {
    const count = counts[index] ?? 0;
    if (!state.view.budget || state.view.budget.refusedCount === count) return;
    const view = { ...state.view, budget: { ...state.view.budget, refusedCount: count } };
    table.clusters.set(view.name, { ...state, view });
    changed = true;
  });
  return changed;
}

export interface RefreshLoopOptions {
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** One refresh; the loop waits for it before scheduling the next. */
  readonly refresh: () => Promise<void>;
}

/** Runs `refresh` every `intervalMs` until `signal` aborts, and says whether the last one succeeded. */
export class RefreshLoop {
  /** The last refresh (or the first load) succeeded. */
  healthy = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #options: RefreshLoopOptions;

  constructor(options: RefreshLoopOptions) {
    this.#options = options;
  }

  schedule(): void {
    const { intervalMs, logger, signal, refresh } = this.#options;
    if (signal.aborted) return;
    this.#timer = setTimeout(async () => {
      try {
        await refresh();
        if (!this.healthy) logger.info("store refresh recovered");
        this.healthy = true;
      } catch (error) {
        // Once per outage: the Redis client's own report says why, at error level (connection-report.ts).
        if (this.healthy)
          logger.warn("store refresh failed; serving the last snapshot", redisFailureFields(error));
        this.healthy = false;
      }
      this.schedule();
    }, intervalMs);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }
}

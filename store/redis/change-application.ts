import { withRecords } from "../cluster-state.js";
import { clusterKeys } from "../keys.js";
import { readChangesWithin, sameReport } from "./budgeted-load.js";
import type { ClusterTable, SourceReads } from "./cluster-table.js";
import type { ClusterChanges } from "./feed-entries.js";
import { readRunId } from "./run-id.js";
import { isReplyError } from "./snapshot.js";
import { readStreamInfos, resumeGapReason } from "./streams.js";

/**
 * Before a feed resumes: a restarted Redis (new run_id) reloads everything; a cluster whose stream was
 * trimmed past our position, reset (its last id is older than ours) or deleted reloads that cluster.
 */
export async function verifyPositions(
  table: ClusterTable,
  reads: SourceReads,
  names: readonly string[],
): Promise<void> {
  const { redis, prefix, logger } = reads;
  const id = await readRunId(redis);
  if (id !== table.runId) {
    logger.warn("redis instance changed; reloading the whole store", { previous: table.runId, current: id });
    return table.reloadAll();
  }
  const replies = await readStreamInfos(
    redis,
    names.map((name) => clusterKeys(prefix, name).changes),
  );
  for (const [index, name] of names.entries()) {
    const state = table.clusters.get(name);
    const reply = replies[index];
    if (!state || !reply) continue;
    let reason: string | undefined;
    try {
      reason = resumeGapReason(reply, state.lastChangeId);
    } catch (error) {
      // Redis answered, but not with a stream (WRONGTYPE): that cluster is reloaded, which leaves it out while
      // its keys stay unreadable, so its stream no longer fails the one XREAD every cluster shares.
      if (!isReplyError(error)) throw error;
      reason = `change stream unreadable: ${error.message}`;
    }
    if (reason) await table.reloadCluster(name, reason);
  }
}

/**
 * Re-reads the services and routes one change batch names, within each cluster's budget (budgeted-load.ts),
 * and publishes the result when a record or what the budget refused changed; the rate the cluster's entries
 * came at, and the bytes they made us read, are counted (change-rate.ts), and a cluster over it is said to be
 * throttled.
 */
export async function applyChanges(
  table: ClusterTable,
  reads: SourceReads,
  changes: readonly ClusterChanges[],
): Promise<void> {
  const { redis, prefix, logger, warnings, now, rate } = reads;
  let changed = false;
  for (const { cluster, lastChangeId, services: touched, routes: touchedRoutes, entries } of changes) {
    const state = table.clusters.get(cluster);
    if (!state) continue;
    rate.spend(cluster, entries, now());
    const throttled = state.view.budget?.throttled === true || rate.throttled(cluster, now());
    const read = { bytes: 0 };
    const records = await readChangesWithin(
      redis,
      prefix,
      cluster,
      state.held,
      { services: touched, routes: touchedRoutes },
      { records: state.records, warnings, read },
    );
    rate.spendBytes(cluster, read.bytes, now());
    const budget = state.held.report({ throttled });
    if (!records && sameReport(budget, state.view.budget)) {
      table.clusters.set(cluster, { ...state, lastChangeId });
      continue;
    }
    table.clusters.set(cluster, withRecords(state, records ?? state.records, lastChangeId, budget));
    changed = true;
    logger.debug("applied changes", { cluster, services: touched, routes: touchedRoutes, id: lastChangeId });
  }
  table.lastLoadAt = now();
  if (changed) table.publish();
}

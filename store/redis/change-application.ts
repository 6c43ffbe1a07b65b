import { clusterKeys } from "../keys.js";
import { clusterView, updatedRecords } from "../stored-records.js";
import type { ClusterTable, SourceReads } from "./cluster-table.js";
import type { ClusterChanges } from "./feed-entries.js";
import { readRunId } from "./run-id.js";
import { isReplyError, readRoutes, readServices } from "./snapshot.js";
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

/** Re-reads the services and routes one change batch names, and publishes the result. */
export async function applyChanges(
  table: ClusterTable,
  reads: SourceReads,
  changes: readonly ClusterChanges[],
): Promise<void> {
  const { redis, prefix, logger, warnings, now } = reads;
  for (const { cluster, lastChangeId, services: touched, routes: touchedRoutes } of changes) {
    const state = table.clusters.get(cluster);
    if (!state) continue;
    const [services, routes] = await Promise.all([
      readServices(redis, prefix, cluster, touched, logger, warnings),
      readRoutes(redis, prefix, cluster, touchedRoutes, logger, warnings),
    ]);
    const records = updatedRecords(state.records, services, routes);
    const view = clusterView(cluster, state.view.stale, records, state);
    table.clusters.set(cluster, { ...state, records, view, lastChangeId });
    logger.debug("applied changes", { cluster, services: touched, routes: touchedRoutes, id: lastChangeId });
  }
  table.lastLoadAt = now();
  table.publish();
}

import type { WarnOnce } from "../../lib/warn-once.js";
import { decodeChangeEntry } from "../changes.js";
import { reportNewerVersion } from "../schema-version.js";
import { streamEntryFields } from "./streams.js";

/** The changes one XREAD batch brought for one cluster. */
export interface ClusterChanges {
  readonly cluster: string;
  /** Id of the batch's last entry of this cluster: the next read resumes after it. */
  readonly lastChangeId: string;
  /** Services named by the batch's valid entries (invalid ones are logged and skipped). */
  readonly services: readonly string[];
  /** Route ids named by the batch's valid entries (a version 1 entry names its annotation route). */
  readonly routes: readonly string[];
  /** Entries of the batch, valid or not: what the cluster's change rate counts (change-rate.ts). */
  readonly entries: number;
}

/**
 * One XREAD reply as the services and routes each cluster's entries name; streams of clusters not in
 * `clusterOf` are skipped.
 */
export function changesOf(
  reply: [string, [string, string[]][]][],
  clusterOf: ReadonlyMap<string, string>,
  warnings: WarnOnce,
): ClusterChanges[] {
  const changes: ClusterChanges[] = [];
  for (const [key, entries] of reply) {
    const cluster = clusterOf.get(key);
    const lastEntry = entries[entries.length - 1];
    if (cluster === undefined || !lastEntry) continue;
    const services = new Set<string>();
    const routes = new Set<string>();
    const invalid: string[] = [];
    for (const [entryId, fields] of entries) {
      const decoded = decodeChangeEntry(streamEntryFields(fields));
      if (decoded.ok) {
        for (const change of decoded.changes) (change.kind === "service" ? services : routes).add(change.id);
      } else if (decoded.newerVersion !== undefined) {
        reportNewerVersion(warnings, cluster, decoded.newerVersion, { entry: entryId });
      } else invalid.push(entryId);
    }
    // One line for a batch, and none for the next batches while they keep holding some: a sync may append
    // thousands of entries to its own stream.
    const problem = `change entries ${cluster}`;
    if (invalid.length === 0) warnings.clear(problem);
    else {
      warnings.warn(problem, "invalid entries", "skipping invalid change entries", {
        cluster,
        count: invalid.length,
        ids: invalid.slice(0, 5),
      });
    }
    changes.push({
      cluster,
      lastChangeId: lastEntry[0],
      services: [...services],
      routes: [...routes],
      entries: entries.length,
    });
  }
  return changes;
}

import * as v from "valibot";
import type { WarnOnce } from "../../lib/warn-once.js";
import { clusterFromHeartbeatKey, clustersKey, heartbeatScanPattern } from "../../store/keys.js";
import { ClusterNameSchema } from "../../store/names.js";
import type { Command, Reply } from "./delta-state.js";

/**
 * Which clusters the store holds: the registry SET every sync adds its name to (one SMEMBERS), plus one step
 * of a SCAN for heartbeat keys carried from refresh to refresh, because a sync from before the registry
 * never adds its name. On a store that holds only edgeslice keys the SCAN step covers every key at once.
 */

/** Keys one SCAN step looks at: the whole keyspace of a dedicated store (8 keys per cluster). */
const SCAN_STEP = "1000";

export function discoveryCommands(prefix: string, scanCursor: string): Command[] {
  return [
    ["smembers", clustersKey(prefix)],
    ["scan", scanCursor, "MATCH", heartbeatScanPattern(prefix), "COUNT", SCAN_STEP],
  ];
}

export interface Discovered {
  /** Valid cluster names found, sorted, each once. */
  readonly names: readonly string[];
  /** Where the next SCAN step starts; "0" once the sweep went round. */
  readonly scanCursor: string;
}

/**
 * The two replies of discoveryCommands. A name that is not a valid cluster name is reported once while it
 * lasts and skipped; a registry Redis cannot read as a set is reported and read as empty.
 */
export function readDiscovery(
  prefix: string,
  [registry, scan]: readonly (Reply | undefined)[],
  warnings: WarnOnce,
): Discovered {
  const found = new Set<string>();
  const invalid: string[] = [];
  if (registry?.[0]) {
    warnings.warn("cluster registry", registry[0].message, "cannot read the registry of clusters", {
      error: registry[0].message,
    });
  } else {
    warnings.clear("cluster registry");
    for (const name of stringsOf(registry?.[1])) {
      if (v.is(ClusterNameSchema, name)) found.add(name);
      else invalid.push(name);
    }
  }
  let scanCursor = "0";
  const scanned = scan?.[1];
  if (!scan?.[0] && Array.isArray(scanned) && typeof scanned[0] === "string") {
    scanCursor = scanned[0];
    for (const key of stringsOf(scanned[1])) {
      const cluster = clusterFromHeartbeatKey(prefix, key);
      if (cluster !== undefined && v.is(ClusterNameSchema, cluster)) found.add(cluster);
      else invalid.push(key);
    }
  }
  if (invalid.length === 0) warnings.clear("cluster names");
  else {
    warnings.warn("cluster names", "invalid", "ignoring invalid cluster names", {
      count: invalid.length,
      examples: invalid.slice(0, 5),
    });
  }
  return { names: [...found].sort(), scanCursor };
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

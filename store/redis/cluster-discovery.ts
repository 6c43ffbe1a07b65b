import { clusterKeys } from "../keys.js";
import type { SourceReads } from "./cluster-table.js";
import { discoverClusters } from "./snapshot.js";

type DiscoveryReads = Pick<SourceReads, "redis" | "prefix" | "logger" | "warnings" | "now">;

/** How often a router with CLUSTER_GRANTS scans the store for clusters the grants do not list (to report them). */
export const UNLISTED_SCAN_MS = 30_000;

/**
 * The clusters a refresh looks at. Without CLUSTER_GRANTS, every heartbeat key a SCAN finds, each refresh. With
 * them, the granted clusters whose heartbeat key exists (one EXISTS each), plus the clusters the last SCAN found
 * that the grants do not list, scanned only every UNLISTED_SCAN_MS: a SCAN walks the whole keyspace, and any
 * sync may fill its own hash tag with heartbeat-shaped keys, so it no longer runs every second.
 */
export class ClusterDiscovery {
  readonly #reads: DiscoveryReads;
  readonly #granted: ReadonlySet<string> | undefined;
  #unlisted: readonly string[] = [];
  #scannedAt = Number.NEGATIVE_INFINITY;

  constructor(reads: DiscoveryReads, granted: ReadonlySet<string> | undefined) {
    this.#reads = reads;
    this.#granted = granted;
  }

  /** Sorted names; `rescan` forces the SCAN (a whole reload). */
  async names(rescan = false): Promise<string[]> {
    const { redis, prefix, logger, warnings, now } = this.#reads;
    const granted = this.#granted;
    if (!granted) return discoverClusters(redis, prefix, logger, warnings);
    const listed = [...granted];
    const [present] = await Promise.all([
      Promise.all(listed.map((name) => redis.exists(clusterKeys(prefix, name).heartbeat))),
      rescan || now() - this.#scannedAt >= UNLISTED_SCAN_MS ? this.#scan() : undefined,
    ]);
    const names = listed.filter((_name, index) => present[index] === 1);
    return [...names, ...this.#unlisted].sort();
  }

  async #scan(): Promise<void> {
    const { redis, prefix, logger, warnings, now } = this.#reads;
    const found = await discoverClusters(redis, prefix, logger, warnings);
    this.#unlisted = found.filter((name) => !this.#granted?.has(name));
    this.#scannedAt = now();
  }
}

import type { Redis } from "ioredis";
import { silentLogger } from "../../../lib/logger.js";
import { clusterKeys } from "../../../store/keys.js";
import { loadCluster } from "../../../store/redis/snapshot.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { ServiceRecordV2 } from "../../../store/services.js";

/** What the sync published for one cluster, read the way routers read it (store/redis/snapshot.ts). */
export interface Published {
  /** Service records (schema version 2, as routers see every version) by `namespace/name`. */
  readonly services: ReadonlyMap<string, ServiceRecordV2>;
  /** Route records by id. */
  readonly routes: ReadonlyMap<string, RouteRecord>;
  /** The lease key is missing: routers treat the cluster as stale. */
  readonly stale: boolean;
  /** The heartbeat record exists: routers know the cluster. */
  readonly registered: boolean;
}

export async function published(redis: Redis, prefix: string, cluster: string): Promise<Published> {
  const loaded = await loadCluster(redis, prefix, cluster, silentLogger);
  return {
    services: loaded.view.servicesV2,
    routes: loaded.view.routes,
    stale: loaded.view.stale,
    registered: loaded.registered,
  };
}

/**
 * The sorted backend addresses of one published Service on its first port (the one its annotations expose),
 * or undefined when it is not published.
 */
export async function publishedAddresses(
  redis: Redis,
  prefix: string,
  cluster: string,
  service: string,
): Promise<string[] | undefined> {
  const record = (await published(redis, prefix, cluster)).services.get(service);
  return record?.ports[0]?.ipv4.endpoints.map((endpoint) => endpoint.ip).sort();
}

/** The holder written in the lease key (`<prefix>:{cluster}:lease`), null while the key is missing. */
export function leaseHolder(redis: Redis, prefix: string, cluster: string): Promise<string | null> {
  return redis.get(clusterKeys(prefix, cluster).lease);
}

export interface LeaseSample {
  readonly at: number;
  readonly holder: string | null;
}

/**
 * Samples the lease key every `intervalMs` until stopped: the record of who held it and when it was
 * missing, for handover assertions and measurements.
 */
export function sampleLease(
  redis: Redis,
  prefix: string,
  cluster: string,
  intervalMs = 25,
): { readonly samples: readonly LeaseSample[]; stop(): Promise<LeaseSample[]> } {
  const samples: LeaseSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const holder = await leaseHolder(redis, prefix, cluster).catch(() => "(redis error)");
      samples.push({ at: Date.now(), holder });
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Consecutive runs of the same holder: [{holder, from, to}], to = time of the run's last sample. */
export function holderRuns(
  samples: readonly LeaseSample[],
): { holder: string | null; from: number; to: number }[] {
  const runs: { holder: string | null; from: number; to: number }[] = [];
  for (const sample of samples) {
    const last = runs[runs.length - 1];
    if (last && last.holder === sample.holder) last.to = sample.at;
    else runs.push({ holder: sample.holder, from: sample.at, to: sample.at });
  }
  return runs;
}

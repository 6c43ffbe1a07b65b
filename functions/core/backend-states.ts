import type { IpFamily } from "../../lib/ip.js";
import { endpointAddress, type ServiceRecord } from "../../store/records.js";
import type { Snapshot } from "../../store/store.js";

/**
 * Backends by state, computed at scrape time from the snapshot and the ejection state (never kept per
 * request). The states do not overlap, so they add up to every endpoint the store lists for a family:
 * - ready: ready endpoints, not ejected;
 * - fallback: serving-terminating endpoints used because none is ready (the family's `fallback`), not ejected;
 * - draining: serving-terminating endpoints next to ready ones: kept for sticky sessions, no new traffic;
 * - ejected: ready or fallback endpoints that passive ejection leaves out right now.
 */
export type BackendState = "ready" | "fallback" | "draining" | "ejected";
export const BACKEND_STATES: readonly BackendState[] = ["ready", "fallback", "draining", "ejected"];
export const FAMILIES: readonly IpFamily[] = ["ipv4", "ipv6"];

export type StateCounts = Readonly<Record<BackendState, number>>;

export interface ServiceBackends {
  readonly cluster: string;
  readonly service: string;
  readonly family: IpFamily;
  readonly counts: StateCounts;
}

/** One family of one record, by state. */
export function familyStates(
  record: ServiceRecord,
  family: IpFamily,
  isEjected: (address: string) => boolean,
): StateCounts {
  const { endpoints, fallback, draining } = record[family];
  let ejected = 0;
  for (const endpoint of endpoints) if (isEjected(endpointAddress(endpoint))) ejected++;
  const serving = endpoints.length - ejected;
  return {
    ready: fallback ? 0 : serving,
    fallback: fallback ? serving : 0,
    draining: draining.length,
    ejected,
  };
}

/**
 * Every (cluster, service, family) of the snapshot that lists any endpoint, stale clusters included (they
 * still serve when every cluster is stale). A family with no endpoint at all is left out.
 */
export function backendStates(
  snapshot: Snapshot | undefined,
  isEjected: (address: string) => boolean,
): ServiceBackends[] {
  const rows: ServiceBackends[] = [];
  if (!snapshot) return rows;
  for (const cluster of snapshot.clusters) {
    for (const record of cluster.services.values()) {
      for (const family of FAMILIES) {
        const listed = record[family];
        if (listed.endpoints.length === 0 && listed.draining.length === 0) continue;
        rows.push({
          cluster: cluster.name,
          service: record.service,
          family,
          counts: familyStates(record, family, isEjected),
        });
      }
    }
  }
  return rows;
}

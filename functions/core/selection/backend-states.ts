import type { IpFamily } from "../../../lib/ip.js";
import { endpointAddress, type FamilyRecord } from "../../../store/records.js";
import type { ServiceRecordV2 } from "../../../store/services.js";
import type { Snapshot } from "../../../store/store.js";

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

/** Whether passive ejection leaves an address out now; undefined while nothing is ejected (no address is read). */
export type EjectedCheck = ((address: string) => boolean) | undefined;

/** One family of one port's backends, by state. */
export function familyStates(
  record: Readonly<Record<IpFamily, FamilyRecord>>,
  family: IpFamily,
  isEjected: EjectedCheck,
): StateCounts {
  const { endpoints, fallback, draining } = record[family];
  let ejected = 0;
  if (isEjected) for (const endpoint of endpoints) if (isEjected(endpointAddress(endpoint))) ejected++;
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
 * still serve when every cluster is stale), summed over the Service's ports (each port's endpoints are listed
 * apart). A family with no endpoint at all is left out.
 */
export function backendStates(snapshot: Snapshot | undefined, isEjected: EjectedCheck): ServiceBackends[] {
  return [...eachServiceBackends(snapshot, isEjected)];
}

/** backendStates one row at a time, cluster by cluster, computed as they are read (a scrape renders in slices). */
export function* eachServiceBackends(
  snapshot: Snapshot | undefined,
  isEjected: EjectedCheck,
): Generator<ServiceBackends> {
  if (!snapshot) return;
  for (const cluster of snapshot.clusters) {
    for (const record of cluster.servicesV2.values()) {
      for (const family of FAMILIES) {
        const counts = serviceFamilyStates(record, family, isEjected);
        if (counts) yield { cluster: cluster.name, service: record.service, family, counts };
      }
    }
  }
}

/** One family of a Service's backends by state, summed over its ports; undefined when no port lists any. */
function serviceFamilyStates(
  record: ServiceRecordV2,
  family: IpFamily,
  isEjected: EjectedCheck,
): StateCounts | undefined {
  let listed = false;
  const counts = { ready: 0, fallback: 0, draining: 0, ejected: 0 };
  for (const port of record.ports) {
    if (port[family].endpoints.length === 0 && port[family].draining.length === 0) continue;
    listed = true;
    const states = familyStates(port, family, isEjected);
    for (const state of BACKEND_STATES) counts[state] += states[state];
  }
  return listed ? counts : undefined;
}

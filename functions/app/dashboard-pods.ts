import type { IpFamily } from "../../lib/ip.js";
import { endpointAddress, type FamilyRecord } from "../../store/records.js";
import { type BackendState, FAMILIES } from "../core/selection/backend-states.js";

/** One pod of a route's Service port in one cluster, in the state backend-states.ts counts it in. */
export interface DashboardPod {
  readonly address: string;
  readonly family: IpFamily;
  readonly state: BackendState;
}

/** Pods listed per (route, cluster, Service port): past this the dashboard says how many it left out. */
export const MAX_PODS_LISTED = 16;

/**
 * The pods a Service port lists, ejected and draining ones first (those an operator looks for), then the
 * rest in store order, at most `MAX_PODS_LISTED`; `more` counts the ones left out.
 */
export function podsOf(
  record: Readonly<Record<IpFamily, FamilyRecord>>,
  isEjected: (address: string) => boolean,
): { pods: DashboardPod[]; more: number } {
  const out: DashboardPod[] = [];
  const serving: DashboardPod[] = [];
  for (const family of FAMILIES) {
    const { endpoints, fallback, draining } = record[family];
    for (const endpoint of endpoints) {
      const address = endpointAddress(endpoint);
      if (isEjected(address)) out.push({ address, family, state: "ejected" });
      else serving.push({ address, family, state: fallback ? "fallback" : "ready" });
    }
    for (const endpoint of draining)
      out.push({ address: endpointAddress(endpoint), family, state: "draining" });
  }
  const all = [...out, ...serving];
  return { pods: all.slice(0, MAX_PODS_LISTED), more: Math.max(0, all.length - MAX_PODS_LISTED) };
}

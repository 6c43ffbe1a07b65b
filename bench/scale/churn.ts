import { routeIndexOf } from "../../functions/core/snapshot/route-index.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { FakeKube } from "../../test/fake-kube/server.js";
import { applyPacedChanges, type ChangePace, type ChangeTimings } from "../support/paced-changes.js";
import type { SyncWorkload } from "./sync-workload.js";

export type ChurnPace = ChangePace;

/**
 * Paced slice changes (bench/support/paced-changes.ts). A change is routed once the reader's snapshot holds its
 * address and the route index of that snapshot is built, which the router does on the first request after a
 * snapshot, so its cost is part of the latency.
 */
export function applyChurn(
  kube: FakeKube,
  reader: RedisSnapshotSource,
  cluster: string,
  workload: SyncWorkload,
  pace: ChurnPace,
): Promise<ChangeTimings> {
  return applyPacedChanges({
    ...pace,
    current: () => reader.current(),
    cluster,
    drainMs: 20_000,
    onSnapshot: (snapshot) => routeIndexOf(snapshot),
    make: () => workload.changeNext(kube),
  });
}

import { NOT_GRANTED } from "../../../store/record-budget.js";
import type { ClusterView } from "../../../store/store.js";
import type { GrantRefusal } from "./granted-clusters.js";

/**
 * What the Node router's reader refused of each cluster to keep it within its budget (store/record-budget.ts),
 * as refusals beside those of CLUSTER_GRANTS, so explain, the dashboard, the log and the metrics say it the
 * same way: `records` (records over RECORD_MAX_BYTES, or past CLUSTER_MAX_BYTES / CLUSTER_MAX_RECORDS; `refused`
 * names the first few, `count` all of them) and `changes` (its change stream ran past
 * CLUSTER_MAX_CHANGES_PER_SECOND). A cluster left unread because CLUSTER_GRANTS does not list it is the grants'
 * `cluster` refusal (granted-clusters.ts).
 */
export function budgetRefusals(clusters: readonly ClusterView[]): GrantRefusal[] {
  const refusals: GrantRefusal[] = [];
  for (const { name, budget } of clusters) {
    if (!budget || budget.unread === NOT_GRANTED) continue;
    if (budget.unread !== undefined || budget.refusedCount > 0) {
      const refused =
        budget.unread !== undefined
          ? [`every record: ${budget.unread}`]
          : budget.refused.map(
              (record) =>
                `${record.kind} ${record.id} (${record.bytes} bytes, ${record.reason === "record-size" ? "over RECORD_MAX_BYTES" : "past CLUSTER_MAX_BYTES or CLUSTER_MAX_RECORDS"})`,
            );
      refusals.push({ cluster: name, kind: "records", id: "budget", refused, count: budget.refusedCount });
    }
    if (budget.throttled) {
      refusals.push({ cluster: name, kind: "changes", id: "rate", refused: [], count: 0 });
    }
  }
  return refusals;
}

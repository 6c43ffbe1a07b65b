import type { FakeKube } from "../../fake-kube/server.js";

/** One status condition, without its message and times. */
export interface ConditionSummary {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
}

/**
 * The conditions of an HTTPRoute's first `status.parents` entry on the fake API server, once `done` holds or
 * after `timeoutMs` (the sync's leader writes them a moment after it publishes).
 */
export async function untilRouteConditions(
  kube: FakeKube,
  route: { readonly namespace: string; readonly name: string },
  done: (conditions: readonly ConditionSummary[]) => boolean,
  timeoutMs = 5_000,
): Promise<ConditionSummary[]> {
  const read = () => {
    const status = kube.get("HTTPRoute", route.namespace, route.name)?.status as
      | { parents?: { conditions: ConditionSummary[] }[] }
      | undefined;
    return (status?.parents?.[0]?.conditions ?? []).map(({ type, status: value, reason }) => ({
      type,
      status: value,
      reason,
    }));
  };
  const deadline = Date.now() + timeoutMs;
  while (!done(read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return read();
}

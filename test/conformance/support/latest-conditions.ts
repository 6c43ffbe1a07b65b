import type { FakeKind } from "../../fake-kube/resources.js";
import type { FakeKube } from "../../fake-kube/server.js";

/** A status condition as the API server holds it (metav1.Condition, the fields the suite reads). */
export interface StoredCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly observedGeneration?: number;
}

/** An object's generation and every condition of its status: its own, its listeners', parents' and ancestors'. */
export interface ObjectConditions {
  readonly generation: number;
  readonly conditions: readonly StoredCondition[];
}

export function readConditions(
  kube: FakeKube,
  kind: FakeKind,
  namespace: string | undefined,
  name: string,
): ObjectConditions {
  const object = kube.get(kind, namespace ?? "", name);
  const status = (object?.status ?? {}) as {
    conditions?: StoredCondition[];
    listeners?: { conditions?: StoredCondition[] }[];
    parents?: { conditions?: StoredCondition[] }[];
    ancestors?: { conditions?: StoredCondition[] }[];
  };
  return {
    generation: Number(object?.metadata.generation ?? 0),
    conditions: [
      ...(status.conditions ?? []),
      ...(status.listeners ?? []).flatMap((item) => item.conditions ?? []),
      ...(status.parents ?? []).flatMap((item) => item.conditions ?? []),
      ...(status.ancestors ?? []).flatMap((item) => item.conditions ?? []),
    ],
  };
}

/**
 * The suite's GatewayMustHaveLatestConditions / HTTPRouteMustHaveLatestConditions: some conditions, each
 * with the object's current generation as its observedGeneration.
 */
export const hasLatestConditions = (found: ObjectConditions) =>
  found.conditions.length > 0 &&
  found.conditions.every((item) => item.observedGeneration === found.generation);

/** Reads until `done` holds or `timeoutMs` passed (the leader writes status a moment after a change). */
export async function untilConditions(
  read: () => ObjectConditions,
  done: (found: ObjectConditions) => boolean,
  timeoutMs = 5_000,
): Promise<ObjectConditions> {
  const deadline = Date.now() + timeoutMs;
  while (!done(read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return read();
}

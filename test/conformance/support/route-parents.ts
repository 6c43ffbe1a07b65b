import type { FakeKind } from "../../fake-kube/resources.js";
import type { FakeKube } from "../../fake-kube/server.js";

export interface ParentConditions {
  readonly parent: string;
  readonly conditions: readonly string[];
}

/**
 * Each `status.parents` entry of HTTPRoute (or another route `kind`) `namespace/name` as
 * `parent: Type=Status/Reason...`, once `done` holds or after `timeoutMs` (the sync's leader writes status a
 * moment after it publishes).
 */
export async function untilParents(
  kube: FakeKube,
  namespace: string,
  name: string,
  done: (parents: readonly ParentConditions[]) => boolean,
  timeoutMs = 5_000,
  kind: FakeKind = "HTTPRoute",
): Promise<ParentConditions[]> {
  type Entry = {
    parentRef: { name: string; sectionName?: string; port?: number };
    conditions: { type: string; status: string; reason: string }[];
  };
  const read = () => {
    const status = kube.get(kind, namespace, name)?.status as { parents?: Entry[] } | undefined;
    return (status?.parents ?? []).map((entry) => ({
      parent: [entry.parentRef.name, entry.parentRef.sectionName, entry.parentRef.port]
        .filter(Boolean)
        .join("/"),
      conditions: entry.conditions.map((item) => `${item.type}=${item.status}/${item.reason}`),
    }));
  };
  const deadline = Date.now() + timeoutMs;
  while (!done(read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return read();
}

/** Every parent Accepted and its refs resolved, as the suite's HTTPRouteMustHaveParents asks. */
export const acceptedAndResolved = (parents: readonly ParentConditions[], count: number) =>
  parents.length === count &&
  parents.every(
    (entry) =>
      entry.conditions.includes("Accepted=True/Accepted") &&
      entry.conditions.includes("ResolvedRefs=True/ResolvedRefs"),
  );

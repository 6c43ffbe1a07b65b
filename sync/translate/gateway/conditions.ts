/**
 * Status conditions (metav1.Condition) as the translation computes them, and the merge a status writer
 * applies before it writes. The translation leaves `lastTransitionTime` out unless it is given `now`, so
 * two runs over the same objects compare equal; the writer stamps it when a condition's status changes.
 */
export type ConditionStatus = "True" | "False" | "Unknown";

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

/** `generation` is the object's metadata.generation (Gateway API: conditions carry the generation they saw). */
export function condition(
  type: string,
  status: ConditionStatus | boolean,
  reason: string,
  message: string,
  generation: number | null | undefined,
): Condition {
  const value: ConditionStatus = status === true ? "True" : status === false ? "False" : status;
  const base = { type, status: value, reason, message };
  return generation === null || generation === undefined ? base : { ...base, observedGeneration: generation };
}

/** Sets lastTransitionTime on every condition (when the translation is given `now`). */
export function stamped(conditions: readonly Condition[], now: number | undefined): Condition[] {
  if (now === undefined) return [...conditions];
  const at = new Date(now).toISOString();
  return conditions.map((item) => ({ ...item, lastTransitionTime: at }));
}

/**
 * The conditions to write: conditions of types we set replace the existing ones in place, keeping their
 * lastTransitionTime while the status is unchanged; types we do not set are kept as they are, in their order
 * (Gateway API ListenerStatus.conditions: implementations "MUST NOT remove or reorder Conditions that they
 * are not directly responsible for" and "MUST always merge changes into Conditions of the same Type").
 * `now` is an ISO timestamp.
 */
export function mergeConditions(
  existing: readonly Condition[],
  desired: readonly Condition[],
  now: string,
): Condition[] {
  const wanted = new Map(desired.map((item) => [item.type, item]));
  const merged: Condition[] = [];
  for (const current of existing) {
    const next = wanted.get(current.type);
    if (!next) {
      merged.push(current);
      continue;
    }
    wanted.delete(current.type);
    merged.push(transition(current, next, now));
  }
  for (const next of wanted.values())
    merged.push({ ...next, lastTransitionTime: next.lastTransitionTime ?? now });
  return merged;
}

function transition(current: Condition, next: Condition, now: string): Condition {
  const since = current.status === next.status ? current.lastTransitionTime : undefined;
  return { ...next, lastTransitionTime: since ?? next.lastTransitionTime ?? now };
}

/** Route status toward one parent (RouteParentStatus). */
export interface RouteParentStatus {
  readonly parentRef: {
    readonly group: string;
    readonly kind: string;
    readonly namespace?: string;
    readonly name: string;
    readonly sectionName?: string;
    readonly port?: number;
  };
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

/**
 * The `status.parents` to write: entries of other controllers kept as they are, first; ours replaced by
 * `desired` (so parents we no longer serve disappear), carrying lastTransitionTime over per parentRef.
 * Gateway API RouteParentStatus.controllerName: "Controllers should ensure that entries to status populated
 * with their ControllerName are cleaned up when they are no longer necessary."
 */
export function mergeRouteParents(
  existing: readonly RouteParentStatus[],
  desired: readonly RouteParentStatus[],
  controllerName: string,
  now: string,
): RouteParentStatus[] {
  const foreign = existing.filter((entry) => entry.controllerName !== controllerName);
  const ours = existing.filter((entry) => entry.controllerName === controllerName);
  const sameParent = (a: RouteParentStatus["parentRef"], b: RouteParentStatus["parentRef"]) =>
    a.group === b.group &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.namespace === b.namespace &&
    a.sectionName === b.sectionName &&
    a.port === b.port;
  const updated = desired.map((entry) => {
    const before = ours.find((item) => sameParent(item.parentRef, entry.parentRef));
    return { ...entry, conditions: mergeConditions(before?.conditions ?? [], entry.conditions, now) };
  });
  return [...foreign, ...updated];
}

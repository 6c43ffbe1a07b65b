/**
 * What leader election reads from and writes into a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does (https://kubernetes.io/docs/concepts/architecture/leases/). Pure.
 *
 * - Expiry never compares the holder's clock with this one: renewTime is written for humans and tools, and a
 *   candidate counts a lease duration on its own clock from when the record last changed (client-go's
 *   observedTime). So a candidate whose clock runs ahead cannot steal a lease that is being renewed, and one
 *   whose clock runs behind does not wait longer than a lease. The price, as in client-go: a candidate that
 *   just started waits one lease duration before taking a lease whose holder died without releasing it.
 * - Lease times are metav1.MicroTime (RFC 3339 with microseconds); leaseDurationSeconds is an integer.
 */

/** A coordination.k8s.io/v1 Lease as raw JSON: the fields the election reads and writes, the rest kept. */
export interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number | null;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** What the election reads from a Lease. */
export interface LeaseView {
  readonly holderIdentity: string | undefined;
  readonly renewTimeMs: number | undefined;
  readonly leaseDurationSeconds: number | undefined;
}

/** A Lease record as this replica last saw it, and when (on this replica's clock) it first saw it so. */
export interface LeaseObservation {
  readonly record: string;
  readonly sinceMs: number;
}

/** Who writes the Lease, and the whole-second duration it records. */
export interface LeaseClaim {
  readonly name: string;
  readonly namespace: string;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
}

/** The observation after reading `lease` at `nowMs`: its clock restarts only when the record changed. */
export function observeLease(
  previous: LeaseObservation | undefined,
  lease: LeaseView,
  nowMs: number,
): LeaseObservation {
  const record = JSON.stringify([lease.holderIdentity, lease.renewTimeMs, lease.leaseDurationSeconds]);
  return previous?.record === record ? previous : { record, sinceMs: nowMs };
}

/**
 * True when another replica holds a Lease whose record changed less than its leaseDurationSeconds ago, as
 * observed here (`observedSinceMs`, this replica's clock): do not take it.
 */
export function heldByAnother(
  lease: LeaseView,
  identity: string,
  observedSinceMs: number,
  nowMs: number,
): boolean {
  if (!lease.holderIdentity || lease.holderIdentity === identity) return false;
  if (lease.leaseDurationSeconds === undefined) return false;
  return observedSinceMs + lease.leaseDurationSeconds * 1000 > nowMs;
}

/** metav1.MicroTime text: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export function leaseView(lease: LeaseObject): LeaseView {
  return {
    holderIdentity: lease.spec?.holderIdentity || undefined,
    renewTimeMs: timeOf(lease.spec?.renewTime),
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? undefined,
  };
}

/** The Lease `claim.identity` writes at `atMs` to acquire or renew `current` (undefined: create it). */
export function claimedLease(current: LeaseObject | undefined, claim: LeaseClaim, atMs: number): LeaseObject {
  const spec = current?.spec;
  const sameHolder = spec?.holderIdentity === claim.identity;
  // As client-go: every acquisition by a replica that was not the holder counts, a released Lease included.
  const transitions = (spec?.leaseTransitions ?? 0) + (current && !sameHolder ? 1 : 0);
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: current?.metadata ?? { name: claim.name, namespace: claim.namespace },
    spec: {
      holderIdentity: claim.identity,
      leaseDurationSeconds: claim.leaseDurationSeconds,
      acquireTime: sameHolder && spec?.acquireTime ? spec.acquireTime : microTime(atMs),
      renewTime: microTime(atMs),
      leaseTransitions: transitions,
    },
  };
}

/** As client-go's release: no holder, a 1 s duration, times set to now; peers acquire on their next try. */
export function releasedLease(current: LeaseObject, atMs: number): LeaseObject {
  return {
    ...current,
    spec: {
      ...current.spec,
      holderIdentity: null,
      leaseDurationSeconds: 1,
      acquireTime: microTime(atMs),
      renewTime: microTime(atMs),
    },
  };
}

/** MicroTime fields arrive as their JSON string. */
function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

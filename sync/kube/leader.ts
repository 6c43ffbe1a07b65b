import { CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { settlesWithin } from "../../lib/async.js";
import type { Logger } from "../../lib/logger.js";
import { statusOf } from "./api-errors.js";
import {
  claimedLease,
  heldByAnother,
  type LeaseClaim,
  type LeaseObservation,
  leaseView,
  observeLease,
  releasedLease,
} from "./lease-record.js";

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewIntervalMs: number;
  readonly retryIntervalMs: number;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
  readonly logger: Logger;
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
}

export interface LeaderElection {
  start(): void;
  stop(options?: { release?: boolean }): Promise<void>;
  isLeader(): boolean;
}

type Attempt = "holding" | "held-by-another" | "lost-race";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with the semantics of client-go's leaderelection package
 * (https://kubernetes.io/docs/concepts/architecture/leases/): only the leader writes to the store. What is read
 * from and written into the Lease, and when it counts as expired, is lease-record.ts.
 *
 * - Acquire when the Lease is absent, has no holder, or its record has not changed for leaseDurationSeconds
 *   as timed by this replica since it first saw that record.
 * - Every write is a PUT carrying the resourceVersion that was read: a 409 Conflict means another replica
 *   wrote first, and this one lost the race (optimistic concurrency, no lock).
 * - The leader renews every renewIntervalMs; it stops leading as soon as it sees another holder, or when no
 *   renew has succeeded for leaseDurationMs (the moment peers may take the Lease).
 * - The Lease records ceil(leaseDurationMs / 1000) s (>= 1) while this replica steps down after
 *   leaseDurationMs: a leader never outlives the Lease its peers see. A short overlap remains possible if a
 *   leader's process stalls longer than the lease; writers must stay idempotent.
 *
 * @example
 * const election = createLeaderElection({ kubeConfig, namespace: "edgeslice", name: "edgeslice-sync-east",
 *   identity: podName, leaseDurationMs: 15_000, renewIntervalMs: 5_000, retryIntervalMs: 2_500,
 *   onStartedLeading, onStoppedLeading, logger });
 * election.start();
 * await election.stop();                     // releases the Lease if held, so a peer takes over at once
 * await election.stop({ release: false });   // walk away without releasing (a crash, for tests)
 */
export function createLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const { logger, identity, namespace, name } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  const leaseDurationSeconds = Math.max(1, Math.ceil(options.leaseDurationMs / 1000));
  const claim: LeaseClaim = { name, namespace, identity, leaseDurationSeconds };

  let running = false;
  let leader = false;
  let lastRenewAt = 0;
  let loopTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let observed: LeaseObservation | undefined;

  async function tryAcquireOrRenew(): Promise<Attempt> {
    const current = await readLease();
    const attemptAt = now();
    if (!current) {
      const created = await write(() =>
        api.createNamespacedLease({ namespace, body: claimedLease(undefined, claim, attemptAt) }),
      );
      return holdingAt(created, attemptAt);
    }
    const view = leaseView(current);
    observed = observeLease(observed, view, attemptAt);
    if (heldByAnother(view, identity, observed.sinceMs, attemptAt)) return "held-by-another";
    const written = await write(() =>
      api.replaceNamespacedLease({ name, namespace, body: claimedLease(current, claim, attemptAt) }),
    );
    return holdingAt(written, attemptAt);
  }

  function holdingAt(written: boolean, attemptAt: number): Attempt {
    if (!written) return "lost-race";
    // The renewTime written is `attemptAt`: peers count the lease from there, so this replica does too.
    lastRenewAt = attemptAt;
    return "holding";
  }

  async function readLease(): Promise<V1Lease | undefined> {
    try {
      return await api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** Runs a create/replace; false on 409 (someone else wrote first). */
  async function write(call: () => Promise<V1Lease>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      if (statusOf(error) === 409) return false;
      throw error;
    }
  }

  function becomeLeader(): void {
    leader = true;
    logger.info("became leader", { lease: `${namespace}/${name}`, identity });
    armDeadline();
    safely("onStartedLeading", options.onStartedLeading);
  }

  function stepDown(reason: string): void {
    if (!leader) return;
    leader = false;
    if (deadlineTimer) clearTimeout(deadlineTimer);
    deadlineTimer = undefined;
    logger.warn("stopped leading", { lease: `${namespace}/${name}`, identity, reason });
    safely("onStoppedLeading", options.onStoppedLeading);
  }

  /** Steps down when no renew succeeded for a lease duration, even if a request hangs. */
  function armDeadline(): void {
    if (deadlineTimer) clearTimeout(deadlineTimer);
    const remaining = Math.max(0, lastRenewAt + options.leaseDurationMs - now());
    deadlineTimer = setTimeout(() => {
      deadlineTimer = undefined;
      if (leader && now() - lastRenewAt >= options.leaseDurationMs) stepDown("renew deadline passed");
      else if (leader) armDeadline();
    }, remaining);
  }

  async function cycle(): Promise<void> {
    try {
      const outcome = await tryAcquireOrRenew();
      if (!running) return;
      if (outcome === "holding") {
        if (leader) armDeadline();
        else becomeLeader();
      } else if (outcome === "held-by-another") {
        stepDown("another replica holds the lease");
      } else {
        logger.debug("lease write lost the race", { lease: `${namespace}/${name}`, identity });
      }
    } catch (error) {
      logger.warn("lease request failed", {
        lease: `${namespace}/${name}`,
        identity,
        status: statusOf(error),
        error,
      });
    }
  }

  function schedule(): void {
    if (!running) return;
    // client-go jitters the retry period (factor 1.2) so candidates do not collide in step.
    const delay = leader ? options.renewIntervalMs : options.retryIntervalMs * (1 + 0.2 * random());
    loopTimer = setTimeout(() => {
      loopTimer = undefined;
      inFlight = cycle().finally(() => {
        inFlight = undefined;
        schedule();
      });
    }, delay);
  }

  async function release(): Promise<void> {
    try {
      const current = await readLease();
      if (!current || current.spec?.holderIdentity !== identity) return;
      await api.replaceNamespacedLease({ name, namespace, body: releasedLease(current, now()) });
    } catch (error) {
      logger.warn("could not release the lease; peers take it when it expires", {
        status: statusOf(error),
        error,
      });
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      inFlight = cycle().finally(() => {
        inFlight = undefined;
        schedule();
      });
    },
    async stop(stopOptions = {}) {
      running = false;
      if (loopTimer) clearTimeout(loopTimer);
      loopTimer = undefined;
      if (inFlight) await settlesWithin(inFlight, options.leaseDurationMs);
      if (!leader) return;
      if (stopOptions.release ?? true) await settlesWithin(release(), options.leaseDurationMs);
      stepDown("stopped");
    },
    isLeader: () => leader,
  };

  function safely(label: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      logger.error(`${label} threw`, { error });
    }
  }
}

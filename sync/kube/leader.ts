import type { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../../lib/async.js";
import type { Logger } from "../../lib/logger.js";
import { ApiStatusError, failureKind, statusOf } from "./api-errors.js";
import { createKubeApi, type KubeApi } from "./kube-api.js";
import {
  claimedLease,
  heldByAnother,
  type LeaseClaim,
  type LeaseObject,
  type LeaseObservation,
  leaseView,
  observeLease,
  releasedLease,
} from "./lease-record.js";
import type { Reachability } from "./reachability.js";

/**
 * Why a leader stopped leading: `lost` (another replica holds or took the Lease, or a renewal was refused
 * for a reason a retry will not change), `unreachable` (no renewal got through for a lease duration because
 * the API server could not be used: no answer, 5xx, 429, 401/403) or `stopped`.
 */
export type StepDownReason = "lost" | "unreachable" | "stopped";

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly api?: KubeApi | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewIntervalMs: number;
  readonly retryIntervalMs: number;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: (reason: StepDownReason) => void;
  /** An attempt found the Lease held by another replica while this one did not lead. */
  readonly onHeldByAnother?: (() => void) | undefined;
  readonly logger: Logger;
  /** Told of every request's outcome; its recovery triggers an attempt at once. */
  readonly reachability?: Reachability | undefined;
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
}

export interface LeaderElection {
  start(): void;
  stop(options?: { release?: boolean }): Promise<void>;
  isLeader(): boolean;
  /** Try to acquire or renew now instead of at the next retry (e.g. the leader released its fence). */
  kick(): void;
}

type Attempt = "holding" | "held-by-another" | "lost-race";

/** Refusals of the Lease shorter than this are a starting API server's, logged at debug only. */
const FORBIDDEN_QUIET_MS = 10_000;

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with the semantics of client-go's leaderelection package
 * (https://kubernetes.io/docs/concepts/architecture/leases/). What is read from and written into the Lease,
 * and when it counts as expired, is lease-record.ts.
 *
 * - Acquire when the Lease is absent, has no holder, or its record has not changed for leaseDurationSeconds
 *   as timed by this replica since it first saw that record. A candidate tries again exactly when that time
 *   is up, not a retry period later, so a takeover after a crash takes one lease duration plus at most one
 *   retry period (the first observation) plus the two requests.
 * - Every write is a PUT carrying the resourceVersion that was read: a 409 Conflict means another replica
 *   wrote first, and this one lost the race (optimistic concurrency, no lock).
 * - The leader renews every renewIntervalMs; it stops leading as soon as it sees another holder, or when no
 *   renew has succeeded for leaseDurationMs, and says why (StepDownReason): the publishing side may keep a
 *   leader whose API server is unreachable publishing while it holds the store's writer fence.
 *
 * @example
 * const election = createLeaderElection({ kubeConfig, namespace: "edgeslice", name: "edgeslice-sync-east",
 *   identity: podName, leaseDurationMs: 10_000, renewIntervalMs: 3_333, retryIntervalMs: 1_666,
 *   onStartedLeading, onStoppedLeading, logger });
 * election.start();
 * await election.stop();                     // releases the Lease if held, so a peer takes over at once
 * await election.stop({ release: false });   // walk away without releasing (a crash, for tests)
 */
export function createLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const { logger, identity, namespace, name, reachability } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const api = options.api ?? createKubeApi(options.kubeConfig);
  const leaseDurationSeconds = Math.max(1, Math.ceil(options.leaseDurationMs / 1000));
  const claim: LeaseClaim = { name, namespace, identity, leaseDurationSeconds };
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const requestTimeoutMs = Math.max(1_000, Math.min(10_000, Math.floor(options.leaseDurationMs / 2)));

  let running = false;
  let leader = false;
  let lastRenewAt = 0;
  /** Whether every renewal that failed since the last success failed for want of an API server. */
  let failuresUnreachable = true;
  let loopTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let kicked = false;
  /** Since when every attempt has been refused (401/403), undefined when the last one was not. */
  let forbiddenSince: number | undefined;
  let observed: LeaseObservation | undefined;

  /** One request; throws ApiStatusError for a status outside `accept`, and tells reachability. */
  async function request(method: "GET" | "PUT" | "POST", at: string, accept: number[], body?: unknown) {
    try {
      const response = await api.call(method, at, { body, timeoutMs: requestTimeoutMs });
      if (!accept.includes(response.status)) {
        throw new ApiStatusError(response.status, response.body, response.retryAfterSeconds);
      }
      reachability?.reached();
      return response;
    } catch (error) {
      if (failureKind(error) === "unreachable") reachability?.failed(error);
      else reachability?.reached();
      throw error;
    }
  }

  async function tryAcquireOrRenew(): Promise<Attempt> {
    const read = await request("GET", `${path}/${encodeURIComponent(name)}`, [200, 404]);
    const current = read.status === 404 ? undefined : (read.body as LeaseObject);
    const attemptAt = now();
    if (!current) {
      const created = await request("POST", path, [200, 201, 409], claimedLease(undefined, claim, attemptAt));
      return holdingAt(created.status !== 409, attemptAt);
    }
    const view = leaseView(current);
    observed = observeLease(observed, view, attemptAt);
    if (heldByAnother(view, identity, observed.sinceMs, attemptAt)) return "held-by-another";
    const written = await request(
      "PUT",
      `${path}/${encodeURIComponent(name)}`,
      [200, 409],
      claimedLease(current, claim, attemptAt),
    );
    return holdingAt(written.status !== 409, attemptAt);
  }

  function holdingAt(written: boolean, attemptAt: number): Attempt {
    if (!written) return "lost-race";
    // The renewTime written is `attemptAt`: peers count the lease from there, so this replica does too.
    lastRenewAt = attemptAt;
    failuresUnreachable = true;
    return "holding";
  }

  function becomeLeader(): void {
    leader = true;
    logger.info("became leader", { lease: `${namespace}/${name}`, identity });
    armDeadline();
    safely("onStartedLeading", options.onStartedLeading);
  }

  function stepDown(reason: StepDownReason, detail: string): void {
    if (!leader) return;
    leader = false;
    if (deadlineTimer) clearTimeout(deadlineTimer);
    deadlineTimer = undefined;
    const log = reason === "stopped" ? logger.info : logger.warn;
    log("stopped leading", { lease: `${namespace}/${name}`, identity, reason: detail });
    safely("onStoppedLeading", () => options.onStoppedLeading(reason));
  }

  /** Steps down when no renew succeeded for a lease duration, even if a request hangs. */
  function armDeadline(): void {
    if (deadlineTimer) clearTimeout(deadlineTimer);
    const remaining = Math.max(0, lastRenewAt + options.leaseDurationMs - now());
    deadlineTimer = setTimeout(() => {
      deadlineTimer = undefined;
      if (!leader) return;
      if (now() - lastRenewAt < options.leaseDurationMs) return armDeadline();
      stepDown(failuresUnreachable ? "unreachable" : "lost", "renew deadline passed");
    }, remaining);
  }

  async function cycle(): Promise<void> {
    try {
      const outcome = await tryAcquireOrRenew();
      forbiddenSince = undefined;
      if (!running) return;
      if (outcome === "holding") {
        if (leader) armDeadline();
        else becomeLeader();
      } else if (outcome === "held-by-another") {
        logger.debug("the lease is held by another replica", { lease: `${namespace}/${name}`, identity });
        if (leader) stepDown("lost", "another replica holds the lease");
        else if (options.onHeldByAnother) safely("onHeldByAnother", options.onHeldByAnother);
      } else {
        // A 409: someone else wrote the Lease since it was read.
        failuresUnreachable = false;
        logger.debug("lease write lost the race", { lease: `${namespace}/${name}`, identity });
      }
    } catch (error) {
      const kind = failureKind(error);
      if (kind !== "unreachable" && kind !== "forbidden") failuresUnreachable = false;
      const fields = { lease: `${namespace}/${name}`, identity, status: statusOf(error), error };
      if (kind === "forbidden") forbiddenSince ??= now();
      // While the API server is down every attempt fails: the outage is logged once by reachability. A
      // starting API server refuses for about a second; only a refusal that persists is worth a warning.
      const quiet =
        (kind === "unreachable" && reachability !== undefined) ||
        (kind === "forbidden" && now() - (forbiddenSince ?? now()) < FORBIDDEN_QUIET_MS);
      if (quiet) logger.debug("lease request failed", fields);
      else logger.warn("lease request failed", fields);
    }
  }

  function nextDelay(): number {
    if (leader) return options.renewIntervalMs;
    // client-go jitters the retry period (factor 1.2) so candidates do not collide in step.
    const retry = options.retryIntervalMs * (1 + 0.2 * random());
    if (!observed) return retry;
    // Held by another: try again the moment it would count as expired, if that comes first.
    const expiresIn = observed.sinceMs + leaseDurationSeconds * 1000 - now();
    return expiresIn >= 0 ? Math.min(retry, expiresIn + 1) : retry;
  }

  function schedule(delay = nextDelay()): void {
    if (!running) return;
    loopTimer = setTimeout(run, delay);
  }

  function run(): void {
    loopTimer = undefined;
    kicked = false;
    inFlight = cycle().finally(() => {
      inFlight = undefined;
      schedule(kicked ? 0 : undefined);
    });
  }

  const unsubscribe = reachability?.onRecovered(() => kick());

  function kick(): void {
    if (!running) return;
    if (inFlight) {
      kicked = true;
      return;
    }
    if (loopTimer) clearTimeout(loopTimer);
    run();
  }

  async function release(): Promise<void> {
    try {
      const read = await request("GET", `${path}/${encodeURIComponent(name)}`, [200, 404]);
      const current = read.status === 404 ? undefined : (read.body as LeaseObject);
      if (current?.spec?.holderIdentity !== identity) return;
      await request("PUT", `${path}/${encodeURIComponent(name)}`, [200], releasedLease(current, now()));
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
      run();
    },
    async stop(stopOptions = {}) {
      running = false;
      unsubscribe?.();
      if (loopTimer) clearTimeout(loopTimer);
      loopTimer = undefined;
      if (inFlight) await settlesWithin(inFlight, options.leaseDurationMs);
      if (!leader) return;
      if (stopOptions.release ?? true) await settlesWithin(release(), options.leaseDurationMs);
      stepDown("stopped", "stopped");
    },
    isLeader: () => leader,
    kick,
  };

  function safely(label: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      logger.error(`${label} threw`, { error });
    }
  }
}

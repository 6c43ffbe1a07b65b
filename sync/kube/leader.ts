import type { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../../lib/async.js";
import type { Logger } from "../../lib/logger.js";
import { failureKind, statusOf } from "./api-errors.js";
import { createKubeApi, type KubeApi } from "./kube-api.js";
import { LeaseClient } from "./lease-client.js";
import { heldByAnother, type LeaseObservation, leaseView, observeLease } from "./lease-record.js";
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
 *   wrote first, and this one lost the race (optimistic concurrency, no lock; lease-client.ts).
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
  return new LeaseElection(options);
}

/**
 * One replica's side of the election (see createLeaderElection). A loop of attempts (#attempt), one at a
 * time, each scheduled after the last (#schedule: the renew interval while leading, the jittered retry or the
 * observed lease's expiry otherwise); `kick` and a recovered API server run one at once. While leading, a
 * deadline timer steps down when no renewal succeeded for a lease duration, even if a request hangs.
 */
export class LeaseElection implements LeaderElection {
  readonly #options: LeaderElectionOptions;
  readonly #lease: LeaseClient;
  readonly #leaseDurationSeconds: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #unsubscribe: (() => void) | undefined;
  #running = false;
  #leader = false;
  /** When the renewTime this replica last wrote was (peers count the lease from there). */
  #lastRenewAt = 0;
  /** Whether every renewal that failed since the last success failed for want of an API server. */
  #failuresUnreachable = true;
  #loopTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  /** kick() came while an attempt was in flight: the next one starts as soon as it ends. */
  #kicked = false;
  /** Since when every attempt has been refused (401/403), undefined when the last one was not. */
  #forbiddenSince: number | undefined;
  /** The Lease's record as this replica last read it, and since when (by this replica's clock) it is unchanged. */
  #observed: LeaseObservation | undefined;

  constructor(options: LeaderElectionOptions) {
    const { namespace, name, identity } = options;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#leaseDurationSeconds = Math.max(1, Math.ceil(options.leaseDurationMs / 1000));
    const requestTimeoutMs = Math.max(1_000, Math.min(10_000, Math.floor(options.leaseDurationMs / 2)));
    this.#lease = new LeaseClient(
      options.api ?? createKubeApi(options.kubeConfig),
      { name, namespace, identity, leaseDurationSeconds: this.#leaseDurationSeconds },
      requestTimeoutMs,
      options.reachability,
    );
    this.#unsubscribe = options.reachability?.onRecovered(() => this.kick());
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#run();
  }

  async stop(stopOptions: { release?: boolean } = {}): Promise<void> {
    const { leaseDurationMs } = this.#options;
    this.#running = false;
    this.#unsubscribe?.();
    if (this.#loopTimer) clearTimeout(this.#loopTimer);
    this.#loopTimer = undefined;
    if (this.#inFlight) await settlesWithin(this.#inFlight, leaseDurationMs);
    if (!this.#leader) return;
    if (stopOptions.release ?? true) await settlesWithin(this.#release(), leaseDurationMs);
    this.#stepDown("stopped", "stopped");
  }

  isLeader(): boolean {
    return this.#leader;
  }

  kick(): void {
    if (!this.#running) return;
    if (this.#inFlight) {
      this.#kicked = true;
      return;
    }
    if (this.#loopTimer) clearTimeout(this.#loopTimer);
    this.#run();
  }

  /** What a log line says of this election. */
  get #fields(): { lease: string; identity: string } {
    return { lease: `${this.#options.namespace}/${this.#options.name}`, identity: this.#options.identity };
  }

  #run(): void {
    this.#loopTimer = undefined;
    this.#kicked = false;
    this.#inFlight = this.#attempt().finally(() => {
      this.#inFlight = undefined;
      this.#schedule(this.#kicked ? 0 : undefined);
    });
  }

  #schedule(delay = this.#nextDelay()): void {
    if (!this.#running) return;
    this.#loopTimer = setTimeout(() => this.#run(), delay);
  }

  #nextDelay(): number {
    if (this.#leader) return this.#options.renewIntervalMs;
    // client-go jitters the retry period (factor 1.2) so candidates do not collide in step.
    const retry = this.#options.retryIntervalMs * (1 + 0.2 * this.#random());
    if (!this.#observed) return retry;
    // Held by another: try again the moment it would count as expired, if that comes first.
    const expiresIn = this.#observed.sinceMs + this.#leaseDurationSeconds * 1000 - this.#now();
    return expiresIn >= 0 ? Math.min(retry, expiresIn + 1) : retry;
  }

  /** One attempt to acquire or renew, and what follows from its outcome. */
  async #attempt(): Promise<void> {
    try {
      const outcome = await this.#tryAcquireOrRenew();
      this.#forbiddenSince = undefined;
      if (!this.#running) return;
      if (outcome === "holding") {
        if (this.#leader) this.#armDeadline();
        else this.#becomeLeader();
      } else if (outcome === "held-by-another") {
        this.#options.logger.debug("the lease is held by another replica", this.#fields);
        if (this.#leader) this.#stepDown("lost", "another replica holds the lease");
        else if (this.#options.onHeldByAnother)
          this.#safely("onHeldByAnother", this.#options.onHeldByAnother);
      } else {
        // A 409: someone else wrote the Lease since it was read.
        this.#failuresUnreachable = false;
        this.#options.logger.debug("lease write lost the race", this.#fields);
      }
    } catch (error) {
      this.#attemptFailed(error);
    }
  }

  async #tryAcquireOrRenew(): Promise<Attempt> {
    const current = await this.#lease.read();
    const attemptAt = this.#now();
    if (current) {
      const view = leaseView(current);
      this.#observed = observeLease(this.#observed, view, attemptAt);
      if (heldByAnother(view, this.#options.identity, this.#observed.sinceMs, attemptAt))
        return "held-by-another";
    }
    if (!(await this.#lease.claim(current, attemptAt))) return "lost-race";
    // The renewTime written is `attemptAt`: peers count the lease from there, so this replica does too.
    this.#lastRenewAt = attemptAt;
    this.#failuresUnreachable = true;
    return "holding";
  }

  #attemptFailed(error: unknown): void {
    const { logger, reachability } = this.#options;
    const kind = failureKind(error);
    if (kind !== "unreachable" && kind !== "forbidden") this.#failuresUnreachable = false;
    const fields = { ...this.#fields, status: statusOf(error), error };
    if (kind === "forbidden") this.#forbiddenSince ??= this.#now();
    // While the API server is down every attempt fails: the outage is logged once by reachability. A
    // starting API server refuses for about a second; only a refusal that persists is worth a warning.
    const quiet =
      (kind === "unreachable" && reachability !== undefined) ||
      (kind === "forbidden" && this.#now() - (this.#forbiddenSince ?? this.#now()) < FORBIDDEN_QUIET_MS);
    if (quiet) logger.debug("lease request failed", fields);
    else logger.warn("lease request failed", fields);
  }

  #becomeLeader(): void {
    this.#leader = true;
    this.#options.logger.info("became leader", this.#fields);
    this.#armDeadline();
    this.#safely("onStartedLeading", this.#options.onStartedLeading);
  }

  #stepDown(reason: StepDownReason, detail: string): void {
    if (!this.#leader) return;
    this.#leader = false;
    if (this.#deadlineTimer) clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    const { logger } = this.#options;
    const log = reason === "stopped" ? logger.info : logger.warn;
    log("stopped leading", { ...this.#fields, reason: detail });
    this.#safely("onStoppedLeading", () => this.#options.onStoppedLeading(reason));
  }

  /** Steps down when no renew succeeded for a lease duration, even if a request hangs. */
  #armDeadline(): void {
    const { leaseDurationMs } = this.#options;
    if (this.#deadlineTimer) clearTimeout(this.#deadlineTimer);
    const remaining = Math.max(0, this.#lastRenewAt + leaseDurationMs - this.#now());
    this.#deadlineTimer = setTimeout(() => {
      this.#deadlineTimer = undefined;
      if (!this.#leader) return;
      if (this.#now() - this.#lastRenewAt < leaseDurationMs) return this.#armDeadline();
      this.#stepDown(this.#failuresUnreachable ? "unreachable" : "lost", "renew deadline passed");
    }, remaining);
  }

  async #release(): Promise<void> {
    try {
      await this.#lease.release(this.#now);
    } catch (error) {
      this.#options.logger.warn("could not release the lease; peers take it when it expires", {
        status: statusOf(error),
        error,
      });
    }
  }

  #safely(label: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      this.#options.logger.error(`${label} threw`, { error });
    }
  }
}

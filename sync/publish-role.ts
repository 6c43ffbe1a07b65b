import type { Logger } from "../lib/logger.js";
import { type ClusterWriter, FenceRefusedError, type WriterFence } from "../store/store.js";
import type { StepDownReason } from "./kube/leader.js";
import type { SyncMetrics } from "./metrics.js";
import { observedWriter } from "./observed-writer.js";

export interface PublishRoleOptions {
  /** This replica's fenced writer (store.ts ClusterWriter.fence). */
  readonly writer: ClusterWriter & { readonly fence: WriterFence };
  /** Without leader election this replica counts as holding the Lease from the start. */
  readonly leaderElection: boolean;
  /** How long a claim on the fence lasts without renewal: the Lease duration. */
  readonly claimMs: number;
  /** How often a standby looks at the fence, and a Lease holder asks for it (200 ms by default). */
  readonly pollMs?: number | undefined;
  /** The informers completed their first full list. */
  readonly synced: () => boolean;
  /** Begin publishing (this replica holds the fence): announce, re-push, beat. */
  readonly publish: () => Promise<void>;
  /** Stop publishing: no beat, no write after this resolves. */
  readonly unpublish: () => Promise<void>;
  /** Try for the Lease now: the fence just went free, so its holder released or died. */
  readonly kickElection?: (() => void) | undefined;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
}

type LeaseState = "none" | "held" | "degraded";

/**
 * Who publishes: a replica writes only while it holds the Kubernetes Lease AND the store's writer fence, and
 * every write checks the fence atomically, so two replicas never both write. One exception keeps a cluster
 * fresh through a control-plane outage of any length (fail static, as kube-proxy keeps its rules): a leader
 * whose Lease renewals fail because the API server cannot be used (StepDownReason "unreachable") keeps
 * publishing its last known state while it still holds the fence, until another replica claims the fence
 * (it got the Lease, so the API server answers it) or takes it after it expired. Learning from the API server
 * that another replica holds the Lease is not enough: only a claim shows that replica can reach the store. A
 * claimant that loses the Lease again before it takes the fence gets it taken back (retakeUnclaimed).
 *
 * - A new Lease holder asks for the fence every pollMs, leaving a claim its holder sees with its next write;
 *   a leader that lost its Lease to another steps down and releases the fence.
 * - A standby polls who holds the fence (one GET) and tries for the Lease the moment it goes free, so a
 *   handover on SIGTERM (Lease released, then fence) takes a poll period, not a retry period.
 *
 * State: the Lease as this replica knows it ("none", "held", or "degraded": lost for want of an API server,
 * still publishing), whether it holds the fence, whether it publishes, and a yield in progress. Transitions
 * come from the election (startedLeading, stoppedLeading, heldByAnother), from the store (every write:
 * #lostFence, #yieldTo; every poll: #poll, #retakeUnclaimed) and from the process (start, stop, release);
 * each ends in one queued decision (update → #decide).
 */
export class PublishRole {
  /** The writer the pipeline publishes through: it tells the role of every refusal and claim. */
  readonly writer: ClusterWriter;
  readonly #options: PublishRoleOptions;
  readonly #fence: WriterFence;
  readonly #pollMs: number;
  #lease: LeaseState;
  #fenceHeld = false;
  #publishing = false;
  #stopping = false;
  #running = false;
  #pollTimer: NodeJS.Timeout | undefined;
  /** The fence holder at the last poll; null before the first one answered. */
  #lastHolder: string | undefined | null = null;
  /** The holder of the fence this Lease holder waits for, said once per holder. */
  #waitingFor: string | undefined;
  /** The claimant this replica gave the fence up for, until it takes it or this replica leads again. */
  #yieldedTo: string | undefined;
  /** When the fence was released for `yieldedTo`. */
  #releasedAt: number | undefined;
  /** Said once per degraded spell: the election found the Lease held by another replica. */
  #heldByAnotherSeen = false;
  /** The decisions, one at a time. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: PublishRoleOptions) {
    this.#options = options;
    this.#fence = options.writer.fence;
    this.#pollMs = options.pollMs ?? 200;
    this.#lease = options.leaderElection ? "none" : "held";
    this.writer = observedWriter(options.writer, (write) => this.#observed(write));
  }

  start(): void {
    this.#running = true;
    this.#schedulePoll(0);
  }

  startedLeading(): void {
    this.#lease = "held";
    this.#yieldedTo = undefined;
    this.#schedulePoll(0);
    void this.update();
  }

  stoppedLeading(reason: StepDownReason): void {
    if (reason === "unreachable" && this.#fenceHeld && !this.#stopping) {
      this.#lease = "degraded";
      this.#heldByAnotherSeen = false;
      this.#options.logger.warn(
        "the API server cannot be reached: publishing the last known state while holding the writer fence",
        { holder: this.#fence.holder },
      );
      return;
    }
    this.#lease = "none";
    void this.update();
  }

  /** The election found the Lease held by another replica while this one did not lead. */
  heldByAnother(): void {
    // Its claim, once it reaches the store, makes this replica yield (yieldTo); until then nobody else
    // publishes, so a degraded leader keeps the cluster fresh rather than handing it to nobody.
    if (this.#lease === "degraded" && !this.#heldByAnotherSeen) {
      this.#heldByAnotherSeen = true;
      this.#options.logger.info(
        "another replica holds the Lease: publishing until it claims the writer fence",
        {
          holder: this.#fence.holder,
        },
      );
    }
  }

  /** Re-decide (after the informers synced): one decision at a time, queued. */
  update(): Promise<void> {
    const decide = () => this.#decide();
    this.#queue = this.#queue.then(decide, decide);
    return this.#queue;
  }

  get publishing(): boolean {
    return this.#publishing;
  }

  /** No more publishing (stop the pipeline after); the fence stays until release(). */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    await this.update();
  }

  /** Gives the fence back (after the Lease was released, so a standby that sees it free gets both). */
  async release(): Promise<void> {
    this.#lease = "none";
    await this.update();
  }

  /** Publish, stop publishing, give the fence back. */
  async #decide(): Promise<void> {
    const { logger, metrics } = this.#options;
    const lease = this.#lease;
    const want = !this.#stopping && lease !== "none" && this.#fenceHeld && this.#options.synced();
    metrics.set("fenceHeld", this.#fenceHeld ? 1 : 0);
    if (want && !this.#publishing) {
      this.#publishing = true;
      metrics.set("leader", 1);
      logger.info("publishing to the store", {
        cluster: this.writer.cluster,
        identity: this.#fence.holder,
        lease,
      });
      await this.#options.publish();
    } else if (!want && this.#publishing) {
      this.#publishing = false;
      metrics.set("leader", 0);
      logger.info("no longer publishing", {
        cluster: this.writer.cluster,
        lease,
        fenceHeld: this.#fenceHeld,
      });
      await this.#options.unpublish();
    }
    // The fence goes once nothing writes any more, and only with the Lease.
    if (this.#lease === "none" && this.#fenceHeld && !this.#publishing) {
      await this.#releaseFence();
      if (this.#yieldedTo !== undefined) this.#releasedAt = Date.now();
    }
  }

  async #releaseFence(): Promise<void> {
    this.#fenceHeld = false;
    this.#options.metrics.set("fenceHeld", 0);
    const released = await this.#fence.release().catch((error: unknown) => {
      this.#options.logger.warn("could not release the writer fence; it expires on its own", { error });
      return false;
    });
    if (released) this.#options.logger.info("released the writer fence", { holder: this.#fence.holder });
  }

  /** Every write tells whether the fence was still ours, and whether someone claims it. */
  async #observed<T>(write: () => Promise<T>): Promise<T> {
    try {
      const result = await write();
      if (this.#fence.claimant !== undefined) this.#yieldTo(this.#fence.claimant);
      return result;
    } catch (error) {
      if (error instanceof FenceRefusedError) this.#lostFence(error.holder);
      throw error;
    }
  }

  #lostFence(holder: string): void {
    if (!this.#fenceHeld) return;
    this.#fenceHeld = false;
    if (this.#lease === "degraded") this.#lease = "none";
    this.#options.logger.warn("the writer fence is held by another replica: no longer publishing", {
      holder,
    });
    void this.update();
  }

  #yieldTo(claimant: string): void {
    if (this.#lease !== "degraded") return;
    this.#lease = "none";
    this.#yieldedTo = claimant;
    this.#releasedAt = undefined;
    this.#options.logger.warn("yielding the writer fence to the replica that holds the Lease", { claimant });
    void this.update();
  }

  #schedulePoll(delay = this.#pollMs): void {
    if (!this.#running || this.#stopping) return;
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    this.#pollTimer = setTimeout(() => {
      this.#pollTimer = undefined;
      this.#poll()
        .catch((error: unknown) => this.#options.logger.debug("writer fence poll failed", { error }))
        .finally(() => this.#schedulePoll());
    }, delay);
  }

  async #poll(): Promise<void> {
    if (this.#lease === "held" && !this.#fenceHeld) await this.#askForFence();
    else if (this.#lease === "none") await this.#watchFence();
  }

  /** A Lease holder without the fence claims it, and takes it once its holder lets go. */
  async #askForFence(): Promise<void> {
    const status = await this.#fence.acquire(this.#options.claimMs);
    if (status.held) {
      this.#fenceHeld = true;
      this.#waitingFor = undefined;
      this.#options.logger.info("took the writer fence", { holder: this.#fence.holder });
      await this.update();
    } else if (status.holder !== this.#waitingFor) {
      this.#waitingFor = status.holder;
      this.#options.logger.info("holding the Lease; waiting for the writer fence", { holder: status.holder });
    }
  }

  /** A standby looks who holds the fence: free now, it tries for the Lease at once. */
  async #watchFence(): Promise<void> {
    const holder = await this.#fence.holderNow();
    // Free now and not at the last look (or at the first): its holder released it or died.
    if (holder === undefined && this.#lastHolder !== undefined) {
      this.#options.logger.debug("the writer fence went free: trying for the Lease now", {
        was: this.#lastHolder,
      });
      this.#options.kickElection?.();
    }
    this.#lastHolder = holder;
    if (this.#yieldedTo !== undefined) await this.#retakeUnclaimed(holder);
  }

  /**
   * A claimant that still held the Lease would have taken the fence within a poll of its release, and would
   * claim it again while another holds it; a fence left free for a whole claim lifetime means the claimant
   * lost the Lease before it could (a control plane that answered once, then failed it again). With nobody
   * publishing, routers would drop the cluster once its lease ran out, so the replica that yielded takes the
   * fence back and publishes its last known state again, as if it had never yielded.
   */
  async #retakeUnclaimed(holder: string | undefined): Promise<void> {
    if (holder !== undefined) {
      // Taken, by the claimant or anyone else: the handover is done.
      if (holder !== this.#fence.holder) this.#yieldedTo = undefined;
      return;
    }
    const { claimMs, logger } = this.#options;
    if (this.#releasedAt === undefined || Date.now() - this.#releasedAt < claimMs || this.#stopping) return;
    const status = await this.#fence.acquire(0);
    if (!status.held) return;
    if (this.#lease === "none" && !this.#stopping) {
      this.#lease = "degraded";
      this.#heldByAnotherSeen = false;
      logger.warn("the claimant never took the writer fence: publishing the last known state again", {
        claimant: this.#yieldedTo,
      });
    }
    this.#yieldedTo = undefined;
    this.#fenceHeld = true;
    // Degraded again, or leading since, or stopping: decide publishes or gives the fence back.
    await this.update();
  }
}

import type { Logger } from "../lib/logger.js";
import type { BackendTlsWriter } from "../store/backend-tls.js";
import type { CertificateWriter } from "../store/certificates.js";
import { type ClusterWriter, FenceRefusedError, type WriterFence } from "../store/store.js";
import type { StepDownReason } from "./kube/leader.js";
import type { SyncMetrics } from "./metrics.js";

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

export interface PublishRole {
  /** The writer the pipeline publishes through: it tells the role of every refusal and claim. */
  readonly writer: ClusterWriter;
  start(): void;
  startedLeading(): void;
  stoppedLeading(reason: StepDownReason): void;
  /** The election found the Lease held by another replica while this one did not lead. */
  heldByAnother(): void;
  /** Re-decide after the informers synced. */
  update(): Promise<void>;
  readonly publishing: boolean;
  /** No more publishing (stop the pipeline after); the fence stays until release(). */
  stop(): Promise<void>;
  /** Gives the fence back (after the Lease was released, so a standby that sees it free gets both). */
  release(): Promise<void>;
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
 */
export function createPublishRole(options: PublishRoleOptions): PublishRole {
  const { logger, metrics } = options;
  const inner = options.writer;
  const fence = inner.fence;
  const pollMs = options.pollMs ?? 200;
  let lease: LeaseState = options.leaderElection ? "none" : "held";
  let fenceHeld = false;
  let publishing = false;
  let stopping = false;
  let running = false;
  let pollTimer: NodeJS.Timeout | undefined;
  /** The fence holder at the last poll; null before the first one answered. */
  let lastHolder: string | undefined | null = null;
  let waitingFor: string | undefined;
  /** The claimant this replica gave the fence up for, until it takes it or this replica leads again. */
  let yieldedTo: string | undefined;
  /** When the fence was released for `yieldedTo`. */
  let releasedAt: number | undefined;
  /** Said once per degraded spell: the election found the Lease held by another replica. */
  let heldByAnotherSeen = false;
  let queue: Promise<void> = Promise.resolve();

  const releaseFence = async () => {
    fenceHeld = false;
    metrics.set("fenceHeld", 0);
    const released = await fence.release().catch((error: unknown) => {
      logger.warn("could not release the writer fence; it expires on its own", { error });
      return false;
    });
    if (released) logger.info("released the writer fence", { holder: fence.holder });
  };

  /** One decision at a time (queued): publish, stop publishing, give the fence back. */
  const decide = async () => {
    const want = !stopping && lease !== "none" && fenceHeld && options.synced();
    metrics.set("fenceHeld", fenceHeld ? 1 : 0);
    if (want && !publishing) {
      publishing = true;
      metrics.set("leader", 1);
      logger.info("publishing to the store", { cluster: inner.cluster, identity: fence.holder, lease });
      await options.publish();
    } else if (!want && publishing) {
      publishing = false;
      metrics.set("leader", 0);
      logger.info("no longer publishing", { cluster: inner.cluster, lease, fenceHeld });
      await options.unpublish();
    }
    // The fence goes once nothing writes any more, and only with the Lease.
    if (lease === "none" && fenceHeld && !publishing) {
      await releaseFence();
      if (yieldedTo !== undefined) releasedAt = Date.now();
    }
  };
  const update = () => {
    queue = queue.then(decide, decide);
    return queue;
  };

  const lostFence = (holder: string) => {
    if (!fenceHeld) return;
    fenceHeld = false;
    if (lease === "degraded") lease = "none";
    logger.warn("the writer fence is held by another replica: no longer publishing", { holder });
    void update();
  };

  const yieldTo = (claimant: string) => {
    if (lease !== "degraded") return;
    lease = "none";
    yieldedTo = claimant;
    releasedAt = undefined;
    logger.warn("yielding the writer fence to the replica that holds the Lease", { claimant });
    void update();
  };

  /** Every write tells whether the fence was still ours, and whether someone claims it. */
  const observed = async <T>(write: () => Promise<T>): Promise<T> => {
    try {
      const result = await write();
      if (fence.claimant !== undefined) yieldTo(fence.claimant);
      return result;
    } catch (error) {
      if (error instanceof FenceRefusedError) lostFence(error.holder);
      throw error;
    }
  };

  const writer: ClusterWriter = {
    cluster: inner.cluster,
    fence,
    put: (record) => observed(() => inner.put(record)),
    remove: (service) => observed(() => inner.remove(service)),
    putService: (record) => observed(() => inner.putService(record)),
    removeService: (service) => observed(() => inner.removeService(service)),
    putRoute: (route) => observed(() => inner.putRoute(route)),
    removeRoute: (id) => observed(() => inner.removeRoute(id)),
    load: () => inner.load(),
    loadAll: () => inner.loadAll(),
    heartbeat: (beat) => observed(() => inner.heartbeat(beat)),
    ...(inner.certificates ? { certificates: observedCertificates(inner.certificates, observed) } : {}),
    ...(inner.backendTls ? { backendTls: observedBackendTls(inner.backendTls, observed) } : {}),
  };

  const poll = async () => {
    if (lease === "held" && !fenceHeld) {
      const status = await fence.acquire(options.claimMs);
      if (status.held) {
        fenceHeld = true;
        waitingFor = undefined;
        logger.info("took the writer fence", { holder: fence.holder });
        await update();
      } else if (status.holder !== waitingFor) {
        waitingFor = status.holder;
        logger.info("holding the Lease; waiting for the writer fence", { holder: status.holder });
      }
    } else if (lease === "none") {
      const holder = await fence.holderNow();
      // Free now and not at the last look (or at the first): its holder released it or died.
      if (holder === undefined && lastHolder !== undefined) {
        logger.debug("the writer fence went free: trying for the Lease now", { was: lastHolder });
        options.kickElection?.();
      }
      lastHolder = holder;
      if (yieldedTo !== undefined) await retakeUnclaimed(holder);
    }
  };

  /**
   * A claimant that still held the Lease would have taken the fence within a poll of its release, and would
   * claim it again while another holds it; a fence left free for a whole claim lifetime means the claimant
   * lost the Lease before it could (a control plane that answered once, then failed it again). With nobody
   * publishing, routers would drop the cluster once its lease ran out, so the replica that yielded takes the
   * fence back and publishes its last known state again, as if it had never yielded.
   */
  const retakeUnclaimed = async (holder: string | undefined) => {
    if (holder !== undefined) {
      // Taken, by the claimant or anyone else: the handover is done.
      if (holder !== fence.holder) yieldedTo = undefined;
      return;
    }
    if (releasedAt === undefined || Date.now() - releasedAt < options.claimMs || stopping) return;
    const status = await fence.acquire(0);
    if (!status.held) return;
    if (lease === "none" && !stopping) {
      lease = "degraded";
      heldByAnotherSeen = false;
      logger.warn("the claimant never took the writer fence: publishing the last known state again", {
        claimant: yieldedTo,
      });
    }
    yieldedTo = undefined;
    fenceHeld = true;
    // Degraded again, or leading since, or stopping: decide publishes or gives the fence back.
    await update();
  };

  const schedulePoll = (delay = pollMs) => {
    if (!running || stopping) return;
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      poll()
        .catch((error: unknown) => logger.debug("writer fence poll failed", { error }))
        .finally(() => schedulePoll());
    }, delay);
  };

  return {
    writer,
    start() {
      running = true;
      schedulePoll(0);
    },
    startedLeading() {
      lease = "held";
      yieldedTo = undefined;
      schedulePoll(0);
      void update();
    },
    stoppedLeading(reason) {
      if (reason === "unreachable" && fenceHeld && !stopping) {
        lease = "degraded";
        heldByAnotherSeen = false;
        logger.warn(
          "the API server cannot be reached: publishing the last known state while holding the writer fence",
          { holder: fence.holder },
        );
        return;
      }
      lease = "none";
      void update();
    },
    heldByAnother() {
      // Its claim, once it reaches the store, makes this replica yield (yieldTo); until then nobody else
      // publishes, so a degraded leader keeps the cluster fresh rather than handing it to nobody.
      if (lease === "degraded" && !heldByAnotherSeen) {
        heldByAnotherSeen = true;
        logger.info("another replica holds the Lease: publishing until it claims the writer fence", {
          holder: fence.holder,
        });
      }
    },
    update,
    get publishing() {
      return publishing;
    },
    async stop() {
      stopping = true;
      if (pollTimer) clearTimeout(pollTimer);
      pollTimer = undefined;
      await update();
    },
    async release() {
      lease = "none";
      await update();
    },
  };
}

/** The certificate writes of `inner`, each observed for the fence as every other write. */
type Observe = <T>(write: () => Promise<T>) => Promise<T>;

function observedCertificates(inner: CertificateWriter, observed: Observe): CertificateWriter {
  return {
    putCertificate: (record) => observed(() => inner.putCertificate(record)),
    removeCertificate: (id) => observed(() => inner.removeCertificate(id)),
    loadCertificates: () => inner.loadCertificates(),
    putClientValidation: (record) => observed(() => inner.putClientValidation(record)),
    removeClientValidation: (id) => observed(() => inner.removeClientValidation(id)),
    loadClientValidations: () => inner.loadClientValidations(),
  };
}

function observedBackendTls(inner: BackendTlsWriter, observed: Observe): BackendTlsWriter {
  return {
    putBackendTls: (record) => observed(() => inner.putBackendTls(record)),
    removeBackendTls: (field) => observed(() => inner.removeBackendTls(field)),
    loadBackendTls: () => inner.loadBackendTls(),
  };
}

import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../lib/logger.js";
import { createLeaderElection, type LeaderElection } from "../../../sync/kube/leader.js";
import { microTime } from "../../../sync/kube/lease-record.js";
import { type FakeKube, startFakeKube } from "../../fake-kube/server.js";
import { eventually } from "../../support/eventually.js";

interface Candidate {
  readonly identity: string;
  readonly election: LeaderElection;
  readonly transitions: string[];
  /** Why each step-down happened. */
  readonly reasons: string[];
}

describe("leader election against the fake API server", () => {
  let kube: FakeKube;
  const candidates: Candidate[] = [];

  afterEach(async () => {
    for (const candidate of candidates.splice(0)) await candidate.election.stop({ release: false });
    await kube.close();
  });

  async function candidate(identity: string, clockOffsetMs = 0): Promise<Candidate> {
    const transitions: string[] = [];
    const reasons: string[] = [];
    const election = createLeaderElection({
      kubeConfig: kube.kubeConfig(),
      namespace: "edgeslice",
      name: "sync-cluster-a",
      identity,
      leaseDurationMs: 600,
      renewIntervalMs: 150,
      retryIntervalMs: 100,
      onStartedLeading: () => transitions.push("started"),
      onStoppedLeading: (reason) => {
        transitions.push("stopped");
        reasons.push(reason);
      },
      logger: silentLogger,
      now: () => Date.now() + clockOffsetMs,
    });
    const made = { identity, election, transitions, reasons };
    candidates.push(made);
    return made;
  }

  function leaseSpec(): { holderIdentity?: string; leaseTransitions?: number; renewTime?: string } {
    return kube.get("Lease", "edgeslice", "sync-cluster-a")?.spec ?? {};
  }

  const leaders = () => candidates.filter((c) => c.election.isLeader()).map((c) => c.identity);

  async function pair(): Promise<[Candidate, Candidate]> {
    kube = await startFakeKube();
    const a = await candidate("replica-a");
    const b = await candidate("replica-b");
    a.election.start();
    b.election.start();
    await eventually(() => leaders().length === 1, 5_000, "a leader");
    return [a, b];
  }

  it("elects exactly one of two replicas and keeps it while it renews", async () => {
    const [a, b] = await pair();
    const first = leaders()[0];
    // Sample over several lease durations: never two leaders, and the lease keeps its holder.
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      expect(leaders().length).toBeLessThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(leaders()).toEqual([first]);
    expect(leaseSpec().holderIdentity).toBe(first);
    expect([...a.transitions, ...b.transitions]).toEqual(["started"]);
  });

  it("hands over at once when the leader stops and releases the lease", async () => {
    const [a, b] = await pair();
    const [leader, follower] = a.election.isLeader() ? [a, b] : [b, a];
    await leader.election.stop();
    expect(leader.transitions).toEqual(["started", "stopped"]);
    await eventually(() => follower.election.isLeader(), 2_000, "takeover after release");
    expect(leaders()).toEqual([follower.identity]);
    // client-go counts taking a released Lease as a transition too.
    expect(leaseSpec().leaseTransitions).toBe(1);
  });

  it("lets the other replica take over after a leader that stops renewing, once the lease expires", async () => {
    const [a, b] = await pair();
    const [leader, follower] = a.election.isLeader() ? [a, b] : [b, a];
    await leader.election.stop({ release: false });
    await eventually(() => follower.election.isLeader(), 5_000, "takeover after expiry");
    const spec = leaseSpec();
    expect(spec.holderIdentity).toBe(follower.identity);
    expect(spec.leaseTransitions).toBe(1);
    expect(spec.renewTime).toMatch(/\.\d{6}Z$/);
  });

  it("steps down when renewals keep failing for longer than the lease, and leads again after recovery", async () => {
    kube = await startFakeKube();
    const only = await candidate("replica-a");
    only.election.start();
    await eventually(() => only.election.isLeader(), 5_000, "leader");
    kube.failNext(10_000, 500, { verb: "update", kind: "Lease" });
    await eventually(() => !only.election.isLeader(), 5_000, "step-down");
    expect(only.transitions).toEqual(["started", "stopped"]);
    expect(only.reasons).toEqual(["unreachable"]);
    kube.clearFailures();
    await eventually(() => only.election.isLeader(), 5_000, "leading again");
  });

  it("says a leader stepped down for want of an API server when its renewals got no usable answer", async () => {
    kube = await startFakeKube();
    const only = await candidate("replica-a");
    only.election.start();
    await eventually(() => only.election.isLeader(), 5_000, "leader");
    await kube.stop();
    await eventually(() => !only.election.isLeader(), 5_000, "step-down");
    expect(only.reasons).toEqual(["unreachable"]);
    await kube.restart({ forbiddenForMs: 300 });
    await eventually(() => only.election.isLeader(), 5_000, "leading again");
    expect(leaseSpec().leaseTransitions ?? 0).toBe(0);
  });

  it("says a leader lost the Lease when it finds another holder, and a kicked candidate tries at once", async () => {
    const [a, b] = await pair();
    const [leader, follower] = a.election.isLeader() ? [a, b] : [b, a];
    await leader.election.stop({ release: false });
    kube.apply({
      kind: "Lease",
      metadata: { name: "sync-cluster-a", namespace: "edgeslice" },
      spec: { holderIdentity: "elsewhere", leaseDurationSeconds: 3600, renewTime: microTime(Date.now()) },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(follower.election.isLeader()).toBe(false);
    expect(follower.reasons).toEqual([]);
    kube.remove("Lease", "edgeslice", "sync-cluster-a");
    const gets = kube.requests("get", "Lease");
    follower.election.kick();
    await eventually(() => follower.election.isLeader(), 1_000, "the kicked candidate leads");
    expect(kube.requests("get", "Lease")).toBeLessThanOrEqual(gets + 2);
  });

  it("does not take a lease another identity holds and keeps renewing", async () => {
    kube = await startFakeKube();
    kube.apply({
      kind: "Lease",
      metadata: { name: "sync-cluster-a", namespace: "edgeslice" },
      spec: { holderIdentity: "elsewhere", leaseDurationSeconds: 3600, renewTime: microTime(Date.now()) },
    });
    const waiting = await candidate("replica-a");
    waiting.election.start();
    await eventually(() => kube.requests("get", "Lease") >= 3, 5_000, "several attempts");
    expect(waiting.election.isLeader()).toBe(false);
    expect(kube.requests("update", "Lease")).toBe(0);
  });

  it("never takes a lease its holder keeps renewing, even with a clock an hour ahead of the holder's", async () => {
    kube = await startFakeKube();
    const holder = await candidate("replica-a");
    holder.election.start();
    await eventually(() => holder.election.isLeader(), 5_000, "leader");
    const ahead = await candidate("replica-b", 3_600_000);
    ahead.election.start();
    // Several lease durations (1 s recorded) of the holder renewing every 150 ms.
    const deadline = Date.now() + 2_500;
    while (Date.now() < deadline) {
      expect(leaders()).toEqual(["replica-a"]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(ahead.transitions).toEqual([]);
    expect(leaseSpec().leaseTransitions ?? 0).toBe(0);
  });

  it("takes over within a lease of the holder going silent, even with a clock an hour behind the holder's", async () => {
    kube = await startFakeKube();
    const holder = await candidate("replica-a");
    holder.election.start();
    await eventually(() => holder.election.isLeader(), 5_000, "leader");
    const behind = await candidate("replica-b", -3_600_000);
    behind.election.start();
    await eventually(() => kube.requests("get", "Lease") >= 6, 5_000, "the follower observing the lease");
    await holder.election.stop({ release: false });
    await eventually(() => behind.election.isLeader(), 5_000, "takeover after the lease went unrenewed");
    expect(leaseSpec().holderIdentity).toBe("replica-b");
  });
});

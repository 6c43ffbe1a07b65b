import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../lib/logger.js";
import {
  createLeaderElection,
  heldByAnother,
  type LeaderElection,
  type LeaseView,
  microTime,
  observeLease,
} from "../../../sync/kube/leader.js";
import { eventually } from "../../fake-kube/fixtures.js";
import { type FakeKube, startFakeKube } from "../../fake-kube/server.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("lease expiry rule", () => {
  const lease = (holderIdentity: string | undefined, renewTimeMs: number | undefined): LeaseView => ({
    holderIdentity,
    renewTimeMs,
    leaseDurationSeconds: 10,
  });

  it.each<[string, LeaseView, number, boolean]>([
    ["no holder", lease(undefined, NOW), NOW, false],
    ["held by me", lease("me", NOW), NOW - 60_000, false],
    ["held by another, record seen changing 9 s ago", lease("b", NOW - 9_000), NOW - 9_000, true],
    ["held by another, record unchanged for 10 s", lease("b", NOW - 9_000), NOW - 10_000, false],
    // renewTime is the holder's clock: an hour behind ours says nothing about whether it still renews.
    ["held by another, renewTime an hour old but just seen changing", lease("b", NOW - 3_600_000), NOW, true],
    [
      "held by another, renewTime in our future but unchanged for 10 s",
      lease("b", NOW + 3_600_000),
      NOW - 10_000,
      false,
    ],
    ["held by another, no renewTime, just seen", lease("b", undefined), NOW, true],
  ])("%s → held by another: %s", (_label, view, observedSinceMs, expected) => {
    expect(heldByAnother(view, "me", observedSinceMs, NOW)).toBe(expected);
  });

  it("restarts the observation clock only when the Lease record changes", () => {
    const first = observeLease(undefined, lease("b", NOW - 5_000), NOW);
    expect(first.sinceMs).toBe(NOW);
    expect(observeLease(first, lease("b", NOW - 5_000), NOW + 4_000)).toBe(first);
    expect(observeLease(first, lease("b", NOW - 1_000), NOW + 4_000).sinceMs).toBe(NOW + 4_000);
    expect(observeLease(first, lease("c", NOW - 5_000), NOW + 4_000).sinceMs).toBe(NOW + 4_000);
  });

  it("writes Lease times as MicroTime with six fractional digits", () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe("2026-01-02T03:04:05.678000Z");
  });
});

interface Candidate {
  readonly identity: string;
  readonly election: LeaderElection;
  readonly transitions: string[];
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
    const election = createLeaderElection({
      kubeConfig: kube.kubeConfig(),
      namespace: "edgeslice",
      name: "sync-cluster-a",
      identity,
      leaseDurationMs: 600,
      renewIntervalMs: 150,
      retryIntervalMs: 100,
      onStartedLeading: () => transitions.push("started"),
      onStoppedLeading: () => transitions.push("stopped"),
      logger: silentLogger,
      now: () => Date.now() + clockOffsetMs,
    });
    const made = { identity, election, transitions };
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
    kube.clearFailures();
    await eventually(() => only.election.isLeader(), 5_000, "leading again");
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

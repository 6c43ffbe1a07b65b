import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../contract/logger.js";
import {
  createLeaderElection,
  heldByAnother,
  type LeaderElection,
  type LeaseView,
  microTime,
} from "../../sync/leader.js";
import { eventually } from "../fake-kube/fixtures.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("lease expiry rule", () => {
  it.each<[string, LeaseView, boolean]>([
    ["no holder", { holderIdentity: undefined, renewTimeMs: NOW, leaseDurationSeconds: 10 }, false],
    ["held by me", { holderIdentity: "me", renewTimeMs: NOW, leaseDurationSeconds: 10 }, false],
    [
      "held by another, fresh",
      { holderIdentity: "b", renewTimeMs: NOW - 9_000, leaseDurationSeconds: 10 },
      true,
    ],
    [
      "held by another, expired",
      { holderIdentity: "b", renewTimeMs: NOW - 10_000, leaseDurationSeconds: 10 },
      false,
    ],
    [
      "held by another, no renewTime",
      { holderIdentity: "b", renewTimeMs: undefined, leaseDurationSeconds: 10 },
      false,
    ],
  ])("%s → held by another: %s", (_label, lease, expected) => {
    expect(heldByAnother(lease, "me", NOW)).toBe(expected);
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

  async function candidate(identity: string): Promise<Candidate> {
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
});

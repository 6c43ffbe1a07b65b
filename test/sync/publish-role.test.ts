import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../store/memory-store.js";
import { SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import type { ClusterWriter, WriterFence } from "../../store/store.js";
import { createSyncMetrics } from "../../sync/metrics.js";
import { PublishRole } from "../../sync/publish-role.js";
import { eventually } from "../support/eventually.js";
import { recordingLogger } from "../support/loggers.js";

const record: ServiceRecord = {
  v: SCHEMA_VERSION,
  cluster: "east",
  service: "shop/web",
  hosts: ["web.example.com"],
  pathPrefix: "/",
  port: { name: "http", number: 80 },
  ipv4: { endpoints: [{ ip: "10.0.0.1", port: 8080 }], fallback: false, draining: [] },
  ipv6: { endpoints: [], fallback: false, draining: [] },
};

interface Replica {
  readonly role: PublishRole;
  readonly fence: WriterFence;
  readonly kicks: number[];
  /** What the pipeline would do while publishing: beat through the role's writer. */
  beat(): Promise<void>;
}

describe("who publishes: the Lease and the writer fence", () => {
  const store = new MemoryStore();
  const roles: PublishRole[] = [];
  afterEach(async () => {
    for (const role of roles.splice(0)) await role.stop();
  });

  function replica(identity: string, cluster = "east"): Replica {
    const writer = store.writer(cluster, { holder: identity, ttlMs: 1_000 }) as ClusterWriter & {
      fence: WriterFence;
    };
    const kicks: number[] = [];
    const role: PublishRole = new PublishRole({
      writer,
      leaderElection: true,
      claimMs: 1_000,
      pollMs: 10,
      synced: () => true,
      publish: async () => {},
      unpublish: async () => {},
      kickElection: () => kicks.push(Date.now()),
      logger: recordingLogger().logger,
      metrics: createSyncMetrics(),
    });
    roles.push(role);
    role.start();
    const beat = async () => {
      await role.writer.heartbeat({ holder: identity, leaseMs: 1_000, at: Date.now() }).catch(() => false);
    };
    return { role, fence: writer.fence, kicks, beat };
  }

  /** `a` leads and publishes, then its renewals fail for want of an API server: it publishes on, degraded. */
  async function degradedLeader(a: Replica): Promise<void> {
    a.role.startedLeading();
    await eventually(() => a.role.publishing, 2_000, "a publishes");
    a.role.stoppedLeading("unreachable");
  }

  /** `b` takes the Lease and claims the fence; `a` yields with its next write, and `b` publishes. */
  async function handsOver(a: Replica, b: Replica): Promise<void> {
    b.role.startedLeading();
    const yielded = async () => {
      await a.beat();
      return !a.role.publishing;
    };
    await eventually(yielded, 2_000, "a yields to the claim");
    await eventually(() => b.role.publishing, 2_000, "b publishes");
  }

  it("publishes once it holds the Lease and the fence, and a second Lease holder waits for the fence", async () => {
    const a = replica("a", "one");
    const b = replica("b", "one");
    expect(a.role.publishing).toBe(false);
    a.role.startedLeading();
    await eventually(() => a.role.publishing, 2_000, "a publishes");
    expect(await a.fence.holderNow()).toBe("a");
    b.role.startedLeading();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(b.role.publishing).toBe(false);
    await a.beat();
    expect(a.fence.claimant).toBe("b");
  });

  it("keeps publishing through an API server outage while it holds the fence, yields it to a Lease holder's claim, and takes nothing back from a claimant that took it", async () => {
    const a = replica("a", "two");
    const b = replica("b", "two");
    await degradedLeader(a);
    await a.beat();
    expect(a.role.publishing).toBe(true);

    // b reached the API server and took the Lease: its claim reaches a with a's next write.
    await handsOver(a, b);
    expect(await b.fence.holderNow()).toBe("b");
    await expect(a.role.writer.put({ ...record, cluster: "two" })).rejects.toMatchObject({
      name: "FenceRefusedError",
      holder: "b",
    });
    // Longer than a claim lives, b beating as it publishes: the fence stays with b.
    for (let beat = 0; beat < 13; beat++) {
      await b.beat();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([a.role.publishing, b.role.publishing]).toEqual([false, true]);
    expect(await b.fence.holderNow()).toBe("b");
  });

  it("stops publishing and releases the fence when the Lease goes to another replica", async () => {
    const a = replica("a", "three");
    a.role.startedLeading();
    await eventually(() => a.role.publishing, 2_000, "a publishes");
    a.role.stoppedLeading("lost");
    await eventually(
      async () => !a.role.publishing && (await a.fence.holderNow()) === undefined,
      2_000,
      "let go",
    );
  });

  it("stops publishing at the first write the fence refuses", async () => {
    const a = replica("a", "four");
    a.role.startedLeading();
    await eventually(() => a.role.publishing, 2_000, "a publishes");
    const intruder = store.writer("four", { holder: "x", ttlMs: 60_000 });
    await a.fence.release();
    await intruder.fence?.acquire(0);
    await expect(a.role.writer.put({ ...record, cluster: "four" })).rejects.toMatchObject({ holder: "x" });
    await eventually(() => !a.role.publishing, 2_000, "a stopped");
  });

  it("tries for the Lease as soon as a standby sees the fence go free", async () => {
    const a = replica("a", "five");
    const b = replica("b", "five");
    a.role.startedLeading();
    await eventually(() => a.role.publishing, 2_000, "a publishes");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = b.kicks.length;
    await a.role.stop();
    await a.role.release();
    await eventually(() => b.kicks.length > before, 1_000, "b kicked its election");
  });

  it("a degraded leader that learns another holds the Lease keeps publishing until that replica claims the fence", async () => {
    const a = replica("a", "six");
    const b = replica("b", "six");
    await degradedLeader(a);
    // b holds the Lease but has not reached the store yet: handing the fence to nobody would let it lapse.
    a.role.heldByAnother();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await a.beat();
    expect(a.role.publishing).toBe(true);
    expect(await a.fence.holderNow()).toBe("a");
    await handsOver(a, b);
  });

  it("takes the fence back and publishes again when the claimant loses the Lease before taking it", async () => {
    const a = replica("a", "seven");
    const b = replica("b", "seven");
    await degradedLeader(a);

    // b got the Lease from an API server that answered once, claimed the fence, and lost the Lease again
    // (its renewals failed) before a had let go: nobody holding the Lease will take the fence now.
    b.role.startedLeading();
    const claimSeen = async () => {
      await a.beat();
      return a.fence.claimant === "b";
    };
    await eventually(claimSeen, 2_000, "b claims the fence");
    b.role.stoppedLeading("unreachable");
    await eventually(
      async () => !a.role.publishing && (await a.fence.holderNow()) === undefined,
      2_000,
      "a yields to the claim",
    );
    expect(b.role.publishing).toBe(false);

    await eventually(() => a.role.publishing, 3_000, "a publishes again");
    expect(await a.fence.holderNow()).toBe("a");
    await a.beat();
    expect([a.role.publishing, b.role.publishing]).toEqual([true, false]);
  });
});

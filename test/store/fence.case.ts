import { describe, expect, it } from "vitest";
import { type ServiceRecord, serializeServiceRecord } from "../../store/records.js";
import { type ClusterWriter, FenceRefusedError, type WriterFence } from "../../store/store.js";
import { endpoint, serviceRecord } from "../e2e/support/contract-layout.js";
import { eventually } from "../support/eventually.js";
import type { StoreDriver } from "./store.case.js";

const LONG_MS = 60_000;

function web(ip: string, service = "shop/web"): ServiceRecord {
  return serviceRecord({ cluster: "east", service, ipv4: [endpoint(ip, 8080)] });
}

/**
 * The writer fence (store.ts ClusterWriter.fence) as every store implements it: one holder at a time, every
 * fenced write checked against it atomically, handed over by release or expiry, claims seen by the holder.
 */
export function describeFenceContract(driver: () => StoreDriver): void {
  describe("the writer fence", () => {
    const fenced = (holder: string, ttlMs = LONG_MS): ClusterWriter & { fence: WriterFence } => {
      const writer = driver().writer("east", { holder, ttlMs });
      if (!writer.fence) throw new Error("a writer created with a fence has none");
      return writer as ClusterWriter & { fence: WriterFence };
    };
    const beat = (holder: string) => ({ holder, leaseMs: LONG_MS, at: Date.now() });
    const refusedBy = (holder: string) => expect.objectContaining({ name: "FenceRefusedError", holder });

    it("lets only its holder write: another fenced writer's put, remove and heartbeat are refused, storing nothing", async () => {
      const a = fenced("sync-a");
      const b = fenced("sync-b");
      await a.heartbeat(beat("sync-a"));
      await a.put(web("10.0.0.1"));
      await expect(b.put(web("10.0.0.2"))).rejects.toBeInstanceOf(FenceRefusedError);
      await expect(b.put(web("10.0.0.2", "shop/other"))).rejects.toEqual(refusedBy("sync-a"));
      await expect(b.remove("shop/web")).rejects.toEqual(refusedBy("sync-a"));
      await expect(b.heartbeat(beat("sync-b"))).rejects.toEqual(refusedBy("sync-a"));
      expect(await a.load()).toEqual(new Map([["shop/web", serializeServiceRecord(web("10.0.0.1"))]]));
      expect(await b.fence.holderNow()).toBe("sync-a");
      expect(await b.fence.acquire(0)).toEqual({ held: false, holder: "sync-a" });
    });

    it("hands the fence over once its holder releases it, and refuses the former holder after", async () => {
      const a = fenced("sync-a");
      const b = fenced("sync-b");
      expect(await a.fence.acquire(0)).toEqual({ held: true });
      expect(await b.fence.release()).toBe(false);
      expect(await a.fence.release()).toBe(true);
      expect(await a.fence.holderNow()).toBeUndefined();
      expect(await b.fence.acquire(0)).toEqual({ held: true });
      await b.put(web("10.0.0.2"));
      await expect(a.put(web("10.0.0.1"))).rejects.toEqual(refusedBy("sync-b"));
      expect([...(await b.load()).values()]).toEqual([serializeServiceRecord(web("10.0.0.2"))]);
    });

    it("keeps the fence while its holder writes within the TTL, and frees it once the holder goes quiet", async () => {
      const a = fenced("sync-a", 400);
      const b = fenced("sync-b", 400);
      await a.put(web("10.0.0.1"));
      const until = Date.now() + 1_000;
      while (Date.now() < until) {
        await a.heartbeat(beat("sync-a"));
        await expect(b.put(web("10.0.0.2"))).rejects.toEqual(refusedBy("sync-a"));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await eventually(async () => (await b.fence.holderNow()) === undefined, 5_000, "the fence expired");
      await b.put(web("10.0.0.2"));
      expect(await b.fence.holderNow()).toBe("sync-b");
    });

    it("shows the holder a waiting replica's claim, and drops the claim once its claimant took the fence", async () => {
      const a = fenced("sync-a");
      const b = fenced("sync-b");
      await a.heartbeat(beat("sync-a"));
      expect(a.fence.claimant).toBeUndefined();
      expect(await b.fence.acquire(LONG_MS)).toEqual({ held: false, holder: "sync-a" });
      await a.heartbeat(beat("sync-a"));
      expect(a.fence.claimant).toBe("sync-b");

      await a.fence.release();
      expect(await b.fence.acquire(LONG_MS)).toEqual({ held: true });
      await b.heartbeat(beat("sync-b"));
      expect(b.fence.claimant).toBeUndefined();
      expect(await a.fence.acquire(0)).toEqual({ held: false, holder: "sync-b" });
      await b.put(web("10.0.0.2"));
      expect(b.fence.claimant).toBeUndefined();
    });

    it("lets an unfenced writer write whoever holds the fence (tests and the all-in-one demo)", async () => {
      const a = fenced("sync-a");
      await a.put(web("10.0.0.1"));
      const unfenced = driver().writer("east");
      expect(unfenced.fence).toBeUndefined();
      await unfenced.put(web("10.0.0.9"));
      expect(await a.fence.holderNow()).toBe("sync-a");
      expect([...(await a.load()).values()]).toEqual([serializeServiceRecord(web("10.0.0.9"))]);
    });
  });
}

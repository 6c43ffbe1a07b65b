import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../lib/logger.js";
import type { ClusterWriter } from "../../../store/store.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import { Heartbeat, type HeartbeatOptions } from "../../../sync/publish/heartbeat.js";

/** Every record write of a ClusterWriter, doing nothing: these tests look at heartbeats only. */
const NO_RECORD_WRITES = {
  put: async () => {},
  remove: async () => {},
  putService: async () => {},
  removeService: async () => {},
  putRoute: async () => {},
  removeRoute: async () => {},
  load: async () => new Map<string, string>(),
  loadAll: async () => ({ services: new Map<string, string>(), routes: new Map<string, string>() }),
};

function beatingWriter() {
  const beats: { holder: string; leaseMs: number; at: number }[] = [];
  let failures = 0;
  let registered = false;
  const writer: ClusterWriter = {
    cluster: "east",
    ...NO_RECORD_WRITES,
    heartbeat: async (beat) => {
      if (failures > 0) {
        failures--;
        throw new Error("redis down");
      }
      if (beat.ifRegistered && !registered) return false;
      beats.push(beat);
      registered = true;
      return true;
    },
  };
  return {
    writer,
    beats,
    failNext: (count: number) => (failures = count),
    loseStore: () => (registered = false),
  };
}

/** The heartbeat of replica sync-0 with a `leaseMs` lease; options as Heartbeat takes them. */
function heartbeatOver(
  writer: ClusterWriter,
  leaseMs: number,
  options: Partial<Pick<HeartbeatOptions, "metrics" | "onStoreLost">> = {},
): Heartbeat {
  return new Heartbeat({
    writer,
    holder: "sync-0",
    leaseMs,
    logger: silentLogger,
    metrics: options.metrics ?? createSyncMetrics(),
    ...(options.onStoreLost ? { onStoreLost: options.onStoreLost } : {}),
  });
}

describe("heartbeat", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("beats at once and then every leaseMs / 3 while running", async () => {
    const { writer, beats } = beatingWriter();
    const heartbeat = heartbeatOver(writer, 3_000);
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(beats).toHaveLength(4);
    expect(beats.every((beat) => beat.holder === "sync-0" && beat.leaseMs === 3_000)).toBe(true);
    await heartbeat.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(beats).toHaveLength(4);
  });

  it("keeps beating after a failed beat and counts the failure", async () => {
    const { writer, beats, failNext } = beatingWriter();
    const metrics = createSyncMetrics();
    const heartbeat = heartbeatOver(writer, 900, { metrics });
    failNext(2);
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(900);
    expect(metrics.get("heartbeatErrors")).toBe(2);
    expect(beats.length).toBeGreaterThanOrEqual(1);
    expect(metrics.get("lastHeartbeat")).toBeGreaterThan(0);
    await heartbeat.stop();
  });

  it("beats at once on beatNow instead of waiting for the next interval, and only while running", async () => {
    const { writer, beats, failNext } = beatingWriter();
    const heartbeat = heartbeatOver(writer, 60_000);
    heartbeat.beatNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(0);

    failNext(1);
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(0);
    heartbeat.beatNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(1);
    // The periodic schedule restarts from the forced beat: the next one is a full interval later.
    await vi.advanceTimersByTimeAsync(19_999);
    expect(beats).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(beats).toHaveLength(2);
    await heartbeat.stop();
  });

  it("beats again right after a beat that was in flight when beatNow was called", async () => {
    const beats: number[] = [];
    let release: () => void = () => {};
    const writer: ClusterWriter = {
      cluster: "east",
      ...NO_RECORD_WRITES,
      heartbeat: (beat) => {
        beats.push(beat.at);
        if (beats.length > 1) return Promise.resolve(true);
        return new Promise<boolean>((resolve) => {
          release = () => resolve(true);
        });
      },
    };
    const heartbeat = heartbeatOver(writer, 60_000);
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(0);
    heartbeat.beatNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(2);
    await heartbeat.stop();
  });

  it("sends no beat while held, beats once the held work settles, then resumes the period", async () => {
    const { writer, beats } = beatingWriter();
    const heartbeat = heartbeatOver(writer, 300);
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(1);
    let finishRepush: () => void = () => {};
    let failRepush: (error: Error) => void = () => {};
    heartbeat.holdUntil(new Promise<void>((resolve) => (finishRepush = resolve)));
    heartbeat.holdUntil(new Promise<void>((_, reject) => (failRepush = reject)));
    heartbeat.beatNow();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(beats).toHaveLength(1);
    finishRepush();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(1);
    // A failed re-push releases too: the hold bounds a beat's delay, it does not silence the cluster.
    failRepush(new Error("redis down again"));
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(beats).toHaveLength(3);
    await heartbeat.stop();
  });

  it("skips the beat and reports the loss when its heartbeat record vanished, then beats once the re-push is done", async () => {
    const { writer, beats, loseStore } = beatingWriter();
    const metrics = createSyncMetrics();
    let finishRepush: () => void = () => {};
    let losses = 0;
    const heartbeat = heartbeatOver(writer, 300, {
      metrics,
      onStoreLost: () => {
        losses++;
        heartbeat.holdUntil(new Promise<void>((resolve) => (finishRepush = resolve)));
      },
    });
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(250);
    expect(beats).toHaveLength(3);
    expect(losses).toBe(0);

    loseStore();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(beats).toHaveLength(3);
    expect(losses).toBe(1);
    expect(metrics.get("storeLosses")).toBe(1);
    finishRepush();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(100);
    expect(beats).toHaveLength(5);
    expect(losses).toBe(1);
    await heartbeat.stop();
  });
});

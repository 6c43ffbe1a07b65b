import { describe, expect, it } from "vitest";
import { Balancer } from "../../../functions/core/selection/balancer.js";
import type { Backend } from "../../../functions/core/selection/selection.js";

const backends: Backend[] = ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"].map((address) => {
  const [ip = "", port = "0"] = address.split(":");
  return { address, ip, port: Number(port), cluster: "a" };
});

/** A random source that replays the given values. */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

/** mulberry32: a small seeded generator so the load-spread test is reproducible. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("Balancer", () => {
  it.each([
    // first = index 0, second = index 1 (0 of the others): index 1 has fewer in flight.
    ["picks the less loaded of two random backends (p2c)", [0, 0], ["10.0.0.1:80"], "10.0.0.2:80"],
    ["keeps the first of two equally loaded backends", [0.9, 0], [], "10.0.0.3:80"],
  ])("%s", (_what, draws, inFlight, expected) => {
    const balancer = new Balancer("p2c", sequence(...draws));
    for (const address of inFlight) balancer.acquire(address);
    expect(balancer.pick(backends, new Set())?.address).toBe(expected);
  });

  it("never picks a skipped backend", () => {
    const balancer = new Balancer("p2c", Math.random);
    for (let i = 0; i < 200; i++) {
      expect(balancer.pick(backends, new Set(["10.0.0.1:80", "10.0.0.3:80"]))?.address).toBe("10.0.0.2:80");
    }
  });

  it("answers undefined when every backend is skipped", () => {
    const balancer = new Balancer("random", Math.random);
    expect(balancer.pick(backends, new Set(backends.map((b) => b.address)))).toBeUndefined();
  });

  it("spreads load: p2c keeps in-flight counts close to each other", () => {
    const balancer = new Balancer("p2c", seeded(42));
    for (let i = 0; i < 300; i++) {
      const backend = balancer.pick(backends, new Set());
      if (backend) balancer.acquire(backend.address);
    }
    const counts = backends.map((b) => balancer.inFlight(b.address));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(300);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(2);
  });

  it("tracks in-flight counts through acquire and release", () => {
    const balancer = new Balancer("p2c", Math.random);
    balancer.acquire("x");
    balancer.acquire("x");
    balancer.release("x");
    expect(balancer.inFlight("x")).toBe(1);
    expect(balancer.totalInFlight()).toBe(1);
    balancer.release("x");
    balancer.release("x");
    expect(balancer.totalInFlight()).toBe(0);
  });
});

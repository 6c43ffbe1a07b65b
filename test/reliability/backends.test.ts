import { describe, expect, it } from "vitest";
import { startBackend, type TestBackend } from "./support/backends.js";
import { cleanupsAfterEach } from "./support/cleanups.js";
import { startRouterOver } from "./support/memory-router.js";
import { fetchOnce, startTraffic } from "./support/traffic.js";

const HOST = "app.reliability.test";
const defer = cleanupsAfterEach();
const routerOver = (backends: readonly TestBackend[], env: Record<string, string> = {}) =>
  startRouterOver({ host: HOST, service: "shop/web", backends, env }, defer);

describe("slow and dying backends", () => {
  it("a backend killed mid-traffic: idempotent GETs are retried on the other backend and no client sees an error", async () => {
    const alive = await startBackend("alive");
    const doomed = await startBackend("doomed");
    const router = await routerOver([alive, doomed]);
    const traffic = startTraffic(router.url, { host: HOST, concurrency: 4 });
    while (traffic.completed < 40) await new Promise((resolve) => setTimeout(resolve, 10));
    await doomed.kill();
    const killedAt = traffic.completed;
    while (traffic.completed < killedAt + 100) await new Promise((resolve) => setTimeout(resolve, 10));
    const report = await traffic.stop();

    expect(report.clientErrors).toEqual([]);
    expect([...report.statuses.keys()]).toEqual([200]);
    expect(report.backends.slice(0, 40)).toContain("doomed");
    // After the kill every request was answered, and only by the backend still alive.
    expect(report.backends.slice(killedAt + 8)).not.toContain("doomed");
    expect(report.backends.length).toBe(report.total);
  });

  it("a backend slower than the per-try timeout: a GET is retried on the fast backend and answers 200", async () => {
    const slow = await startBackend("slow");
    const fast = await startBackend("fast");
    slow.behave({ kind: "slow", delayMs: 3_000 });
    // A try timeout well below the slow backend's 3 s, yet far above what the fast one needs on a busy machine.
    const router = await routerOver([slow, fast], {
      UPSTREAM_TRY_TIMEOUT_MS: "1000",
      UPSTREAM_TOTAL_TIMEOUT_MS: "5000",
    });
    // The balancer picks at random: send until the slow backend was tried (bounded).
    const results = [];
    while (results.length < 8 || (slow.hits === 0 && results.length < 48)) {
      results.push(await fetchOnce(`${router.url}/`, HOST));
    }
    expect(results.map((r) => r.status)).toEqual(Array(results.length).fill(200));
    expect(results.map((r) => r.backend)).toEqual(Array(results.length).fill("fast"));
    expect(slow.hits).toBeGreaterThan(0);
  });

  it("every backend too slow: the client gets 504 upstream_timeout and the router keeps answering", async () => {
    const slow = await startBackend("slow");
    slow.behave({ kind: "slow", delayMs: 3_000 });
    const router = await routerOver([slow], {
      UPSTREAM_TRY_TIMEOUT_MS: "150",
      UPSTREAM_TOTAL_TIMEOUT_MS: "400",
      UPSTREAM_RETRIES: "1",
    });
    const timedOut = await fetchOnce(`${router.url}/`, HOST);
    expect(timedOut.status).toBe(504);
    expect(JSON.parse(timedOut.body)).toEqual({ error: "upstream_timeout", requestId: expect.any(String) });

    slow.behave({ kind: "ok" });
    const health = await fetchOnce(`${router.url}/_edgeslice/healthz`, HOST);
    expect(health.status).toBe(200);
  });

  it("a POST whose backend resets the connection after receiving it is not replayed: one 502 bad_gateway, one hit", async () => {
    const resetting = await startBackend("resetting");
    const other = await startBackend("other");
    resetting.behave({ kind: "reset" });
    other.behave({ kind: "reset" });
    const router = await routerOver([resetting, other]);
    const response = await fetchOnce(`${router.url}/orders`, HOST, { method: "POST", body: "{}" });
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toEqual({ error: "bad_gateway", requestId: expect.any(String) });
    expect(resetting.hits + other.hits).toBe(1);
  });
});

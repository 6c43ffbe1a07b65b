import { describe, expect, it } from "vitest";
import { freePort } from "../../support/redis.js";
import { ep, publish, serviceRecord } from "../fixtures.js";
import { ROUTER_KINDS, send } from "../harness.js";
import { appTestKit, at, hang } from "./kit.js";

/** The shared proxy policy on both proxy paths: per-try and total timeouts, retries, passive ejection. */
const { backend, routerOf } = appTestKit();

describe.each(ROUTER_KINDS)("%s", (kind) => {
  const router = routerOf(kind);

  describe("timeouts, retries and ejection", () => {
    it("answers 504 upstream_timeout when the per-try timeout fires", async () => {
      const b = await backend("127.0.0.1", hang);
      const r = await router({ config: { tryTimeoutMs: 200, retries: 0 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(b)] }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([
        504,
        expect.stringMatching(/^\{"error":"upstream_timeout","requestId":"[\w-]+"\}$/),
      ]);
    });

    it("retries a timed-out GET on another backend", async () => {
      const slow = await backend("127.0.0.1", hang);
      const fast = await backend("127.0.0.1");
      const r = await router({ config: { tryTimeoutMs: 200, retries: 1 }, random: () => 0 });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(slow), at(fast)] }));
      const res = await send(r.port, {});
      expect(res.status).toBe(200);
      expect([slow.seen.length, fast.seen.length]).toEqual([1, 1]);
    });

    it("answers 504 when the total timeout ends the retries", async () => {
      const hanging = await Promise.all([1, 2, 3, 4].map(() => backend("127.0.0.1", hang)));
      const r = await router({ config: { tryTimeoutMs: 300, totalTimeoutMs: 450, retries: 3 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: hanging.map(at) }));
      const res = await send(r.port, {});
      expect([res.status, res.body]).toEqual([
        504,
        expect.stringMatching(/^\{"error":"upstream_timeout","requestId":"[\w-]+"\}$/),
      ]);
      const attempts = hanging.reduce((sum, h) => sum + h.seen.length, 0);
      expect(attempts).toBeGreaterThanOrEqual(1);
      expect(attempts).toBeLessThan(4);
    });

    it("retries a POST with a streamed body on another backend after a connect failure", async () => {
      const live = await backend("127.0.0.1", (req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (c: string) => (body += c));
        req.on("end", () => res.end(`got ${body}`));
      });
      const dead = ep("127.0.0.1", await freePort());
      const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, at(live)] }));
      for (let i = 0; i < 3; i++) {
        const res = await send(r.port, {
          method: "POST",
          body: `payload-${i}`,
          headers: { "transfer-encoding": "chunked" },
        });
        expect([res.status, res.body]).toEqual([200, `got payload-${i}`]);
      }
    });

    it("retries a failed GET on another backend but never a POST that reached a backend", async () => {
      const resetting = await backend("127.0.0.1", (req) => {
        req.resume();
        req.socket.destroy();
      });
      const live = await backend("127.0.0.1");
      const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [at(resetting), at(live)] }));
      const get = await send(r.port, { method: "GET" });
      expect(get.status).toBe(200);
      const post = await send(r.port, { method: "POST", body: "once" });
      expect([post.status, post.body]).toEqual([
        502,
        expect.stringMatching(/^\{"error":"bad_gateway","requestId":"[\w-]+"\}$/),
      ]);
      expect(resetting.seen.map((s) => s.method)).toEqual(["GET", "POST"]);
      expect(live.seen.map((s) => s.method)).toEqual(["GET"]);
    });

    it("ejects a failing backend after consecutive failures, but never beyond the cap", async () => {
      const live = await backend("127.0.0.1");
      const dead = ep("127.0.0.1", await freePort());
      const r = await router({ random: () => 0, config: { retries: 0 } });
      await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, at(live)] }));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await send(r.port, {})).status);
      // p2c with random 0 always picks the dead backend first until it is ejected (3 failures).
      expect(statuses).toEqual([502, 502, 502, 200, 200, 200]);

      const alone = await router({ random: () => 0, config: { retries: 0 } });
      await publish(alone.store, serviceRecord({ cluster: "a", ipv4: [dead] }));
      const aloneStatuses: number[] = [];
      for (let i = 0; i < 5; i++) aloneStatuses.push((await send(alone.port, {})).status);
      // The cap (50% of one backend is zero) keeps the only backend in: still tried, still 502, never 503.
      expect(aloneStatuses).toEqual([502, 502, 502, 502, 502]);
    });
  });
});

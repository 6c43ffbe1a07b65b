import { describe, expect, it } from "vitest";
import {
  isIdempotent,
  type PolicyDeps,
  type ProxySettings,
} from "../../../functions/core/forwarding/proxy-policy.js";
import { RetryLoop } from "../../../functions/core/forwarding/retry-loop.js";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { Balancer } from "../../../functions/core/selection/balancer.js";
import { PassiveEjection } from "../../../functions/core/selection/ejection.js";
import type { Backend, Selection } from "../../../functions/core/selection/selection.js";
import { silentLogger } from "../../../lib/logger.js";

/** RetryLoop under a rule's HTTPRouteRetry (ProxySettings.routeRetry): which answers it drops, how often, where. */
const pods = (count: number): Backend[] =>
  Array.from({ length: count }, (_, index) => ({
    address: `10.0.0.${index + 1}:80`,
    ip: `10.0.0.${index + 1}`,
    port: 80,
    cluster: "east",
  }));

function selectionOf(backends: Backend[]): Selection {
  return {
    service: "shop/web",
    tiers: [{ name: "all", backends }],
    clusters: [],
    zoneHints: "no-zone-configured",
    addresses: backends.map((backend) => backend.address),
    unresolved: false,
  };
}

function depsWith(settings: Partial<ProxySettings>): PolicyDeps {
  return {
    balancer: new Balancer("random", Math.random),
    ejection: new PassiveEjection(() => 0, { consecutiveFailures: 1_000 }),
    metrics: new RouterMetrics(),
    logger: silentLogger,
    settings: {
      tryTimeoutMs: 1_000,
      totalTimeoutMs: 5_000,
      retries: 2,
      clientBodyIdleTimeoutMs: 1_000,
      ...settings,
    },
  };
}

const resendable = { canResend: () => true };
const RETRY_503 = { codes: new Set([503]), backoffMs: 0 };

/** Runs attempts answered by `statuses` in turn; returns how many went and whether the last answer was passed on. */
function run(loop: RetryLoop, statuses: number[], request = resendable, remainingMs = 5_000) {
  const addresses: string[] = [];
  for (const status of statuses) {
    const backend = loop.next();
    if (!backend) break;
    addresses.push(backend.address);
    if (!loop.retriesAnswer(backend, status, request, remainingMs)) return { addresses, passedOn: status };
  }
  return { addresses, passedOn: undefined };
}

describe("RetryLoop with a rule's retry", () => {
  it.each([
    [
      "drops answers of its codes until one is not",
      "GET",
      { retries: 2, routeRetry: RETRY_503 },
      [503, 200],
      2,
      200,
    ],
    [
      "passes on the last answer once the retries are spent",
      "GET",
      { retries: 2, routeRetry: RETRY_503 },
      [503, 503, 503, 503],
      3,
      503,
    ],
    ["passes on a code the rule does not name", "GET", { retries: 2, routeRetry: RETRY_503 }, [500], 1, 500],
    ["passes on every answer without a rule retry", "GET", { retries: 2 }, [503], 1, 503],
    [
      "never drops an answer to a POST (it reached the backend)",
      "POST",
      { retries: 2, routeRetry: RETRY_503 },
      [503],
      1,
      503,
    ],
    [
      "drops an answer to a PUT (idempotent)",
      "PUT",
      { retries: 1, routeRetry: RETRY_503 },
      [503, 201],
      2,
      201,
    ],
  ] as const)("%s", (_case, method, settings, statuses, attempts, passedOn) => {
    const loop = new RetryLoop(selectionOf(pods(1)), isIdempotent(method), depsWith(settings));
    const result = run(loop, [...statuses]);
    expect(result.addresses).toHaveLength(attempts);
    expect(result.passedOn).toBe(passedOn);
  });

  it("goes back to the one pod of a Service for each retry", () => {
    const loop = new RetryLoop(
      selectionOf(pods(1)),
      isIdempotent("GET"),
      depsWith({ retries: 2, routeRetry: RETRY_503 }),
    );
    expect(run(loop, [503, 503, 200]).addresses).toEqual(["10.0.0.1:80", "10.0.0.1:80", "10.0.0.1:80"]);
  });

  it("tries every other pod before one already tried", () => {
    const loop = new RetryLoop(
      selectionOf(pods(2)),
      isIdempotent("GET"),
      depsWith({ retries: 3, routeRetry: RETRY_503 }),
    );
    const { addresses } = run(loop, [503, 503, 503, 200]);
    expect(new Set(addresses.slice(0, 2)).size).toBe(2);
    expect(addresses).toHaveLength(4);
  });

  it("without a rule retry never goes back to a pod it tried", () => {
    const deps = depsWith({ retries: 2 });
    const loop = new RetryLoop(selectionOf(pods(1)), isIdempotent("GET"), deps);
    const backend = loop.next();
    expect(backend).toBeDefined();
    if (backend) loop.settle(backend, { ok: false, kind: "connect", stop: false }, resendable);
    expect(loop.next()).toBeUndefined();
  });

  it("passes the answer on when its body cannot be sent again", () => {
    const loop = new RetryLoop(
      selectionOf(pods(1)),
      isIdempotent("PUT"),
      depsWith({ routeRetry: RETRY_503 }),
    );
    expect(run(loop, [503, 200], { canResend: () => false }).passedOn).toBe(503);
  });

  it("passes the answer on when the backoff would outlast the request's time", () => {
    const routeRetry = { codes: new Set([503]), backoffMs: 300 };
    const loop = new RetryLoop(selectionOf(pods(1)), isIdempotent("GET"), depsWith({ routeRetry }));
    expect(run(loop, [503, 200], resendable, 200).passedOn).toBe(503);
  });

  it("asks for the backoff before each retry, never before the first attempt", () => {
    const routeRetry = { codes: new Set([503]), backoffMs: 250 };
    const loop = new RetryLoop(selectionOf(pods(1)), isIdempotent("GET"), depsWith({ routeRetry }));
    expect(loop.backoffMs()).toBe(0);
    const backend = loop.next();
    if (backend) loop.retriesAnswer(backend, 503, resendable, 5_000);
    expect(loop.backoffMs()).toBe(250);
  });

  it("counts a dropped answer as an attempt and the next one as a retry", () => {
    const deps = depsWith({ routeRetry: RETRY_503 });
    const loop = new RetryLoop(selectionOf(pods(1)), isIdempotent("GET"), deps);
    run(loop, [503, 200]);
    expect(deps.metrics.retries).toBe(1);
  });
});

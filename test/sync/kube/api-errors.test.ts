import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../../lib/logger.js";
import { ApiStatusError, failureKind } from "../../../sync/kube/api-errors.js";
import { createReachability } from "../../../sync/kube/reachability.js";
import { createRetryPolicy } from "../../../sync/kube/retry-policy.js";

/** kube-apiserver's notfoundhandler body while its paths are not all installed (k8s.io/apiserver 1.24+). */
const STARTING = {
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: "the request has been made before all known HTTP paths have been installed, please try again",
  reason: "ServiceUnavailable",
  details: { retryAfterSeconds: 5 },
  code: 503,
};

describe("what an API server answer means to the sync", () => {
  it.each([
    [503, STARTING, "starting"],
    [503, { message: "etcdserver: request timed out" }, "unreachable"],
    [404, undefined, "rejected"],
    [403, { message: "forbidden" }, "forbidden"],
    [410, undefined, "expired"],
  ])("reads %i %j as %s", (status, body, kind) => {
    expect(failureKind(new ApiStatusError(status, body))).toBe(kind);
  });

  it("waits as long as a starting API server asks (Retry-After) without calling it unreachable", async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ level: "debug", write: (line) => lines.push(line) });
    const reachability = createReachability({ logger });
    const policy = createRetryPolicy({
      label: "httproutes (all namespaces)",
      logger,
      reachability,
      retry: { initialMs: 1, maxMs: 1 },
      random: () => 0.5,
      now: Date.now,
    });
    const waited = new AbortController();
    const started = Date.now();
    const wait = policy.failed(new ApiStatusError(503, STARTING, 0.2), waited.signal);
    await wait;

    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(reachability.unreachableSince).toBeUndefined();
    expect(lines.join("\n")).not.toContain("cannot be reached");
  });
});

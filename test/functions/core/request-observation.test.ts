import { describe, expect, it } from "vitest";
import { batchedLines } from "../../../functions/core/observability/access-log.js";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { RequestObservation } from "../../../functions/core/observability/request-observation.js";
import type { Backend } from "../../../functions/core/selection/selection.js";
import { ep, selectionFor, serviceRecord, snapshotOf } from "../fixtures.js";

const snapshot = snapshotOf([
  {
    name: "east",
    records: [serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("10.0.0.1")] })],
  },
  { name: "west", records: [serviceRecord({ cluster: "west", service: "demo/web", ipv6: [ep("fd00::1")] })] },
]);
const selection = selectionFor(snapshot, { ipFamily: "PreferIPv4", cluster: "east", zone: undefined });
const east: Backend = { address: "10.0.0.1:8080", ip: "10.0.0.1", port: 8080, cluster: "east" };
const west: Backend = { address: "[fd00::1]:8080", ip: "fd00::1", port: 8080, cluster: "west" };
const request = { client: "192.0.2.7", host: "app.example", path: "/x" };

function countLine(metrics: RouterMetrics, labels: string): string | undefined {
  const text = metrics.render({
    inFlight: 0,
    ejected: 0,
    snapshot: {
      loaded: true,
      version: 1,
      ageSeconds: 0,
      clusters: 2,
      staleClusters: 0,
      storeConnected: undefined,
    },
  });
  return text
    .split("\n")
    .find((line) => line.startsWith(`edgeslice_request_duration_seconds_count{${labels}}`));
}

describe("RequestObservation", () => {
  it('labels a request no route matched service="" and logs it without backend', () => {
    const metrics = new RouterMetrics();
    const seen = new RequestObservation("id-1", "GET", 1_000, true);
    seen.respond(metrics, 404, 1_000.5, false);
    expect(countLine(metrics, 'service="",cluster="",method="GET",code="404"')).toMatch(/ 1$/);
    expect(seen.entry(1_002, 50_000, request)).toEqual({
      time: 49_998,
      requestId: "id-1",
      client: "192.0.2.7",
      method: "GET",
      host: "app.example",
      path: "/x",
      status: 404,
      bytes: 0,
      durationMs: 2,
      backend: undefined,
      cluster: "",
      service: "",
      family: "",
      attempts: 0,
    });
  });

  it("labels a backend's answer with the cluster of the last backend tried, after a retry", () => {
    const metrics = new RouterMetrics();
    const seen = new RequestObservation("id-2", "GET", 0, true);
    seen.routed(metrics, selection);
    seen.tried(east);
    seen.tried(west);
    seen.respond(metrics, 200, 12, true);
    seen.bytes += 29;
    expect(countLine(metrics, 'service="demo/web",cluster="west",method="GET",code="200"')).toMatch(/ 1$/);
    expect(seen.entry(20, 1_000_000, request)).toMatchObject({
      status: 200,
      bytes: 29,
      durationMs: 20,
      backend: "[fd00::1]:8080",
      cluster: "west",
      service: "demo/web",
      family: "ipv6",
      attempts: 2,
    });
  });

  it("labels the router's own answer on a route with the route's service and no cluster", () => {
    const metrics = new RouterMetrics();
    const seen = new RequestObservation("id-3", "PUT", 0, false);
    seen.routed(metrics, selection);
    seen.tried(east);
    seen.respond(metrics, 502, 5, false);
    expect(countLine(metrics, 'service="demo/web",cluster="",method="PUT",code="502"')).toMatch(/ 1$/);
    expect(seen.entry(5, 5, request)).toMatchObject({
      backend: undefined,
      cluster: "",
      service: "demo/web",
      attempts: 1,
    });
  });

  it("counts the first response only, however many places report it", () => {
    const metrics = new RouterMetrics();
    const seen = new RequestObservation("id-4", "GET", 0, false);
    seen.routed(metrics, selection);
    seen.tried(east);
    seen.respond(metrics, 200, 1, true);
    seen.respond(metrics, 200, 2, true);
    expect(countLine(metrics, 'service="demo/web",cluster="east",method="GET",code="200"')).toMatch(/ 1$/);
    expect(seen.respondedAt).toBe(1);
  });
});

describe("RequestObservation when the client leaves first", () => {
  it("records code 499 in the RED series without a status class, and logs 499", () => {
    const metrics = new RouterMetrics();
    const seen = new RequestObservation("id-5", "GET", 0, true);
    seen.routed(metrics, selection);
    seen.tried(east);
    seen.clientClosed(metrics, 3);
    expect(countLine(metrics, 'service="demo/web",cluster="",method="GET",code="499"')).toMatch(/ 1$/);
    expect(metrics.requests["4xx"]).toBe(0);
    expect(seen.entry(3, 3, request).status).toBe(499);
  });

  it("logs 499 when nothing was sent and no bytes where the runtime cannot count them", () => {
    const seen = new RequestObservation("id-6", "GET", 0, true);
    seen.bytesCounted = false;
    expect(seen.entry(1, 1, request)).toMatchObject({ status: 499, bytes: undefined });
  });
});

describe("RequestObservation.takeLogLine", () => {
  it("hands out the one line of a sampled request once", () => {
    const seen = new RequestObservation("id-7", "GET", 0, true);
    expect([seen.takeLogLine(), seen.takeLogLine()]).toEqual([true, false]);
  });

  it("never for a request the sample left out", () => {
    expect(new RequestObservation("id-8", "GET", 0, false).takeLogLine()).toBe(false);
  });
});

describe("batchedLines", () => {
  it("writes the lines of one turn as one chunk, each ending in a newline", () => {
    const chunks: string[] = [];
    const scheduled: (() => void)[] = [];
    const line = batchedLines(
      (chunk) => chunks.push(chunk),
      (flush) => scheduled.push(flush),
    );
    line("a");
    line("b");
    expect([chunks, scheduled.length]).toEqual([[], 1]);
    scheduled.shift()?.();
    line("c");
    scheduled.shift()?.();
    expect(chunks).toEqual(["a\nb\n", "c\n"]);
  });
});

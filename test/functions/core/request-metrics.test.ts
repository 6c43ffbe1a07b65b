import { describe, expect, it } from "vitest";
import { attemptOutcome, RouterMetrics } from "../../../functions/core/observability/metrics.js";
import {
  codeLabel,
  methodIndex,
  RequestMetrics,
} from "../../../functions/core/observability/request-metrics.js";
import { renderFamilies } from "../../../lib/prometheus.js";
import { ep, selectionFor, serviceRecord, snapshotOf } from "../fixtures.js";

/** A two-cluster route: east serves demo/web over IPv4, west serves it over IPv6. */
function twoClusterSelection() {
  const snapshot = snapshotOf([
    {
      name: "east",
      records: [serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("10.0.0.1")] })],
    },
    {
      name: "west",
      records: [serviceRecord({ cluster: "west", service: "demo/web", ipv6: [ep("fd00::1")] })],
    },
  ]);
  return selectionFor(snapshot, { ipFamily: "PreferIPv4", cluster: "east", zone: undefined });
}

function rendered(metrics: RouterMetrics): string {
  return metrics.render({
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
}

describe("RED series", () => {
  it("labels a response with the service and cluster of the backend that answered, its method and code", () => {
    const metrics = new RouterMetrics();
    const route = metrics.red.forSelection(twoClusterSelection());
    metrics.respond(route.of("west"), "GET", 200, 0.003);
    metrics.respond(route.of("west"), "GET", 200, 0.02);
    metrics.respond(route.of("east"), "POST", 503, 0.5);
    const text = rendered(metrics);
    expect(text).toContain(
      'edgeslice_request_duration_seconds_bucket{service="demo/web",cluster="west",method="GET",code="200",le="0.005"} 1',
    );
    expect(text).toContain(
      'edgeslice_request_duration_seconds_count{service="demo/web",cluster="west",method="GET",code="200"} 2',
    );
    expect(text).toContain(
      'edgeslice_request_duration_seconds_count{service="demo/web",cluster="east",method="POST",code="503"} 1',
    );
    // The process-wide classes are still counted, once per response.
    expect(text).toContain('edgeslice_requests_total{class="2xx"} 2');
    expect(text).toContain('edgeslice_requests_total{class="5xx"} 1');
  });

  it('labels a host no route matches service="" and cluster=""', () => {
    const metrics = new RouterMetrics();
    metrics.respond(metrics.red.unrouted, "GET", 404, 0.0001);
    expect(rendered(metrics)).toContain(
      'edgeslice_request_duration_seconds_count{service="",cluster="",method="GET",code="404"} 1',
    );
  });

  it("labels the router's own answer on a route with the route's service and cluster=\"\"", () => {
    const metrics = new RouterMetrics();
    const route = metrics.red.forSelection(twoClusterSelection());
    metrics.respond(route.router, "GET", 502, 0.01);
    metrics.respond(route.of("not-in-selection"), "GET", 502, 0.01);
    expect(rendered(metrics)).toContain(
      'edgeslice_request_duration_seconds_count{service="demo/web",cluster="",method="GET",code="502"} 2',
    );
  });

  it("resolves a selection's series once and hands back the same objects", () => {
    const red = new RequestMetrics();
    const selection = twoClusterSelection();
    expect(red.forSelection(selection)).toBe(red.forSelection(selection));
    expect(red.forSelection(selection).of("east")).toBe(red.series("demo/web", "east", "ipv4"));
  });

  it("counts attempts by service, cluster, the family chosen for the cluster, and outcome", () => {
    const metrics = new RouterMetrics();
    const selection = twoClusterSelection();
    metrics.attempted(selection, "east", undefined);
    metrics.attempted(selection, "east", "connect");
    metrics.attempted(selection, "west", "transport");
    metrics.attempted(selection, "west", "timeout");
    metrics.attempted(selection, "west", "client");
    const text = rendered(metrics);
    for (const line of [
      'edgeslice_upstream_attempts_total{service="demo/web",cluster="east",family="ipv4",outcome="ok"} 1',
      'edgeslice_upstream_attempts_total{service="demo/web",cluster="east",family="ipv4",outcome="connect"} 1',
      'edgeslice_upstream_attempts_total{service="demo/web",cluster="west",family="ipv6",outcome="reset"} 1',
      'edgeslice_upstream_attempts_total{service="demo/web",cluster="west",family="ipv6",outcome="timeout"} 1',
    ]) {
      expect(text).toContain(line);
    }
    // A client that went away says nothing about the backend; series never attempted are not rendered.
    expect(text.match(/^edgeslice_upstream_attempts_total\{/gm)).toHaveLength(4);
  });

  it("sums responses, 4xx, 5xx and durations per service and cluster for the dashboard", () => {
    const metrics = new RouterMetrics();
    const route = metrics.red.forSelection(twoClusterSelection());
    metrics.respond(route.of("east"), "GET", 200, 0.01);
    metrics.respond(route.of("east"), "GET", 500, 0.01);
    metrics.respond(route.of("east"), "PUT", 504, 0.01);
    metrics.respond(metrics.red.unrouted, "GET", 404, 0.01);
    metrics.respond(route.of("east"), "GET", 429, 2);
    const totals = metrics.red.totals();
    expect(totals.map(({ durations, ...counts }) => counts)).toEqual([
      { service: "", cluster: "", requests: 1, clientErrors: 1, errors: 0 },
      { service: "demo/web", cluster: "east", requests: 4, clientErrors: 1, errors: 2 },
    ]);
    // 0.01 s falls in the 10 ms bucket (index 3), 2 s in the 2.5 s one (index 10).
    expect(totals[1]?.durations[3]).toBe(3);
    expect(totals[1]?.durations[10]).toBe(1);
    expect(totals[1]?.durations.reduce((a, b) => a + b, 0)).toBe(4);
  });
});

describe("label values from fixed sets", () => {
  it.each([
    ["GET", 0],
    ["CONNECT", 5],
    ["TRACE", 7],
    ["PATCH", 8],
    ["get", 9],
    ["BREW", 9],
  ])("method %s has index %i (OTHER is 9)", (method, index) => {
    expect(methodIndex(method)).toBe(index);
  });

  it("labels a non-standard method OTHER", () => {
    const red = new RequestMetrics();
    red.unrouted.observe("PROPFIND", 207, 0.1);
    const text = renderFamilies(red.families());
    expect(text).toContain('method="OTHER",code="207"');
  });

  it.each([
    [200, "200"],
    [599, "599"],
    [99, "other"],
    [600, "other"],
    [999, "other"],
  ])("code of status %i is %s", (status, label) => {
    expect(codeLabel(status)).toBe(label);
  });

  it.each([
    [undefined, "ok"],
    ["connect", "connect"],
    ["timeout", "timeout"],
    ["transport", "reset"],
  ] as const)("a %s attempt is outcome %s", (kind, outcome) => {
    expect(attemptOutcome(kind)).toBe(outcome);
  });
});

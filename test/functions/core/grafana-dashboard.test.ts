import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { RequestObservation } from "../../../functions/core/observability/request-observation.js";
import { backendStates } from "../../../functions/core/selection/backend-states.js";
import { certificateExpiryFamily } from "../../../functions/node/tls/certificate-source.js";
import { renderFamilies } from "../../../lib/prometheus.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import { ep, selectionFor, serviceRecord, snapshotOf } from "../fixtures.js";

/**
 * deploy/grafana/edgeslice-dashboard.json may only name series the router or the sync export, with labels
 * they carry: a renamed metric or label fails here, not silently as an empty panel.
 */
const DASHBOARD = JSON.parse(readFileSync("deploy/grafana/edgeslice-dashboard.json", "utf8")) as {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
  templating: { list: { type: string; query?: string | { query: string } }[] };
};

/** Every exported series name with the label names it carries, read from real scrapes of both processes. */
function exportedSeries(): Map<string, Set<string>> {
  const snapshot = snapshotOf([
    {
      name: "east",
      records: [serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("10.0.0.1")] })],
    },
  ]);
  const selection = selectionFor(snapshot, { ipFamily: "PreferIPv4", cluster: "east", zone: undefined });
  const router = new RouterMetrics();
  // A request routed by a route rule, answered by a backend, with bodies both ways (traffic-metrics.ts).
  const observation = new RequestObservation("r1", "GET", 0, false);
  observation.routed(router, { ...selection, route: { id: "httproute:demo/web", rule: 0 } });
  observation.tried({ address: "10.0.0.1:8080", ip: "10.0.0.1", port: 8080, cluster: "east" });
  observation.respond(router, 200, 10, true);
  observation.bytes = 12;
  observation.finished(router, 20, 5);
  router.attempted(selection, "east", undefined);
  // A refusal of each kind of limit (issue 35): CLUSTER_GRANTS and the cluster budgets.
  router.grantRefused("evil", "route");
  router.budgetRefused("evil", "records");
  const routerText = router.render({
    inFlight: 0,
    ejected: 0,
    snapshot: {
      loaded: true,
      version: 1,
      ageSeconds: 0,
      clusters: 1,
      staleClusters: 0,
      storeConnected: true,
    },
    backends: backendStates(snapshot, () => false),
    clusters: [
      { name: "east", stale: false },
      { name: "evil", stale: false, budget: { bytes: 1, records: 1, refused: [], refusedCount: 1 } },
    ],
  });
  const syncText = createSyncMetrics({ cluster: "east" }).render();
  const tlsText = renderFamilies([
    certificateExpiryFamily([{ cluster: "east", id: "demo/web-tls", notAfter: 1 }]),
  ]);
  const series = new Map<string, Set<string>>();
  for (const line of `${routerText}${syncText}${tlsText}`.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    if (!match?.[1]) continue;
    const labels = series.get(match[1]) ?? new Set<string>();
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="/g)) labels.add(pair[1] as string);
    series.set(match[1], labels);
  }
  return series;
}

/** Labels Prometheus adds to every scraped series (the target's). */
const TARGET_LABELS = ["instance", "job"];

const PROMQL_WORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
]);

interface Use {
  readonly metrics: string[];
  /** Labels matched in a selector, per metric. */
  readonly selectors: { metric: string; labels: string[] }[];
  /** Labels of by (...) / without (...). */
  readonly grouping: string[];
}

/** The metrics, selector labels and grouping labels one PromQL expression uses. */
function uses(expr: string): Use {
  const selectors: Use["selectors"] = [];
  const grouping: string[] = [];
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  rest = rest.replace(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g, (_whole, metric: string, body: string) => {
    selectors.push({
      metric,
      labels: [...body.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] as string),
    });
    return metric;
  });
  rest = rest.replace(/\[[^\]]*\]/g, "");
  rest = rest.replace(/\b(?:by|without)\s*\(([^)]*)\)/g, (_whole, list: string) => {
    grouping.push(...list.split(",").map((label) => label.trim()));
    return "";
  });
  const metrics = [...rest.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\()/g)]
    .map((m) => m[1] as string)
    .filter((word) => !PROMQL_WORDS.has(word));
  return { metrics, selectors, grouping };
}

const exprs = DASHBOARD.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
const series = exportedSeries();

describe("deploy/grafana/edgeslice-dashboard.json", () => {
  it("gives every panel but the rows at least one query", () => {
    for (const panel of DASHBOARD.panels.filter((p) => p.type !== "row")) {
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
    }
  });

  it.each(exprs)("names only exported series and their labels: %s", (expr) => {
    const use = uses(expr);
    expect(use.metrics.length, "names no metric").toBeGreaterThan(0);
    for (const metric of use.metrics)
      expect([...series.keys()], `${metric} is not exported`).toContain(metric);
    const known = new Set([
      ...TARGET_LABELS,
      ...use.metrics.flatMap((metric) => [...(series.get(metric) ?? [])]),
    ]);
    for (const { metric, labels } of use.selectors) {
      for (const label of labels)
        expect([...(series.get(metric) ?? [])], `${metric} has no ${label}`).toContain(label);
    }
    for (const label of use.grouping) expect([...known], `grouping by ${label}`).toContain(label);
  });

  it("takes its variables from exported series and labels", () => {
    const queries = DASHBOARD.templating.list
      .filter((variable) => variable.type === "query")
      .map((variable) => (typeof variable.query === "string" ? variable.query : variable.query?.query) ?? "");
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(query) ?? [];
      expect([...(series.get(metric ?? "") ?? [])], query).toContain(label);
    }
  });

  it("covers rate, error ratio, p50/p95/p99, attempts by outcome, backends by state, freshness, routes, bytes, total time, connections and certificate expiry, grant and budget refusals, bytes held per cluster", () => {
    const all = exprs.join("\n");
    for (const quantile of ["0.5", "0.95", "0.99"]) expect(all).toContain(`histogram_quantile(${quantile},`);
    expect(all).toMatch(/code=~"5\.\."/);
    expect(all).toContain("sum by (outcome) (rate(edgeslice_upstream_attempts_total");
    expect(all).toContain("sum by (state)");
    for (const metric of [
      "edgeslice_request_duration_seconds_count",
      "edgeslice_request_duration_seconds_bucket",
      "edgeslice_backends",
      "edgeslice_cluster_stale",
      "edgeslice_store_connected",
      "edgeslice_snapshot_age_seconds",
      "edgeslice_sync_last_heartbeat_timestamp_seconds",
      "edgeslice_route_requests_total",
      "edgeslice_request_bytes_total",
      "edgeslice_response_bytes_total",
      "edgeslice_request_total_seconds_bucket",
      "edgeslice_client_connections",
      "edgeslice_http2_streams",
      "edgeslice_tls_certificate_expiry_timestamp_seconds",
      "edgeslice_grant_refusals_total",
      "edgeslice_budget_refusals_total",
      "edgeslice_cluster_held_bytes",
      "edgeslice_cluster_refused_records",
    ]) {
      expect(all).toContain(metric);
    }
  });
});

describe("the PromQL reader of this test", () => {
  it("finds metrics, selector labels and grouping labels, and skips functions, strings and ranges", () => {
    expect(
      uses(
        'histogram_quantile(0.99, sum by (service, le) (rate(m_bucket{a=~"x|y",b!="z"}[$__rate_interval]))) / n',
      ),
    ).toEqual({
      metrics: ["m_bucket", "n"],
      selectors: [{ metric: "m_bucket", labels: ["a", "b"] }],
      grouping: ["service", "le"],
    });
  });
});

import { fixed, formatTable } from "../support/table.js";
import type { MetricsSizeResult, ScrapeFigures } from "./metrics-bench.js";
import { endpointsOf } from "./store-fixture.js";

/**
 * The line, e.g. `metrics scrape (10 clusters, 1000000 endpoints): 900 ms, 18000000 bytes, max event-loop
 * delay 4 ms`; a setting other than the default names itself after the endpoints.
 */
export function scrapeLine(figures: ScrapeFigures): string {
  const setting = figures.series === "service" ? "" : `, METRICS_BACKENDS=${figures.series}`;
  const label = `metrics scrape (${figures.size.clusters} clusters, ${endpointsOf(figures.size)} endpoints${setting})`;
  return `${label}: ${Math.round(figures.ms)} ms, ${figures.bytes} bytes, max event-loop delay ${Math.round(figures.maxDelayMs)} ms`;
}

export function formatMetricsReport(results: readonly MetricsSizeResult[]): string {
  const out = [
    "## Metrics: a scrape per store size",
    "",
    "20 endpoints per Service. Loop delay: the router's own monitorEventLoopDelay (1 ms resolution, so an idle loop",
    "reads about 1 ms; time the process was not scheduled counts too) while the body streams. Busiest tick: the most",
    "CPU the router used between two runs of a 1 ms timer (its work alone). At once: the same exposition rendered in",
    "one go, as every scrape held the router's loop before it was sliced.",
    "",
  ];
  const rows = results.flatMap((result) =>
    result.scrapes.map((figures) => [
      `${figures.size.clusters} × ${figures.size.services}`,
      String(endpointsOf(figures.size)),
      figures.series,
      `${fixed(figures.ms, 0)} ms`,
      `${fixed(figures.bytes / 1e6, 2)} MB`,
      `${fixed(figures.maxDelayMs, 1)} ms`,
      `${fixed(figures.p99DelayMs, 1)} ms`,
      `${fixed(figures.busiestMs, 1)} ms`,
      figures.series === "service" ? `${fixed(result.renderAtOnceMs, 0)} ms` : "",
    ]),
  );
  out.push(
    formatTable(
      [
        "clusters × Services",
        "endpoints",
        "METRICS_BACKENDS",
        "scrape",
        "body",
        "max loop delay",
        "p99",
        "busiest tick",
        "at once",
      ],
      rows,
    ),
    "",
  );
  for (const result of results) {
    for (const figures of result.scrapes) {
      out.push(scrapeLine(figures));
      const expected = endpointsOf(figures.size);
      if (figures.readyEndpoints !== undefined && figures.readyEndpoints !== expected) {
        out.push(
          `  (the scrape counted ${figures.readyEndpoints} ready endpoints of ${expected}: check the store)`,
        );
      }
    }
  }
  return out.join("\n");
}

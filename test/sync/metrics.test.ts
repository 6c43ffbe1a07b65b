import { describe, expect, it } from "vitest";
import { createSyncMetrics } from "../../sync/metrics.js";

describe("the sync's metrics", () => {
  it("observes event-to-published latency and keeps the last publish time", () => {
    const metrics = createSyncMetrics({ cluster: "east" });
    metrics.published(120, 1_700_000_000_500);
    metrics.published(undefined, 1_700_000_001_900);
    const text = metrics.render();
    expect(text).toContain("# TYPE edgeslice_sync_event_to_published_seconds histogram");
    expect(text).toContain('edgeslice_sync_event_to_published_seconds_bucket{cluster="east",le="0.1"} 0');
    expect(text).toContain('edgeslice_sync_event_to_published_seconds_bucket{cluster="east",le="0.25"} 1');
    expect(text).toContain('edgeslice_sync_event_to_published_seconds_count{cluster="east"} 1');
    expect(text).toContain('edgeslice_sync_last_publish_timestamp_seconds{cluster="east"} 1700000001');
  });

  it("counts relists and watch restarts by resource and reason", () => {
    const metrics = createSyncMetrics({ cluster: "east" });
    metrics.relisted("endpointslices", "expired");
    metrics.watchRestarted("services", "timeout");
    metrics.watchRestarted("services", "timeout");
    metrics.watchRestarted("services", "stalled");
    const text = metrics.render();
    expect(text).toContain(
      'edgeslice_sync_relists_total{cluster="east",resource="endpointslices",reason="expired"} 1',
    );
    expect(text).toContain(
      'edgeslice_sync_watch_restarts_total{cluster="east",resource="services",reason="timeout"} 2',
    );
    expect(metrics.countOf("watchRestarts", "services", "stalled")).toBe(1);
  });

  it("renders the API server's reachability as collected just before each scrape", () => {
    const metrics = createSyncMetrics({ cluster: "east" });
    let since: number | undefined = 1_700_000_000_000;
    metrics.beforeRender(() => {
      metrics.set("apiserverReachable", since === undefined ? 1 : 0);
      metrics.set("apiserverUnreachableSince", since === undefined ? 0 : Math.floor(since / 1000));
    });
    expect(metrics.render()).toContain(
      'edgeslice_sync_apiserver_unreachable_since_timestamp_seconds{cluster="east"} 1700000000',
    );
    expect(metrics.render()).toContain('edgeslice_sync_apiserver_reachable{cluster="east"} 0');
    since = undefined;
    expect(metrics.render()).toContain('edgeslice_sync_apiserver_reachable{cluster="east"} 1');
  });
});

/** Counters of one router process, rendered in the Prometheus text format (version 0.0.4). */
export type UpstreamErrorKind = "connect" | "timeout" | "transport";

export interface SnapshotGauges {
  readonly loaded: boolean;
  readonly version: number;
  /** Seconds since this router first saw the current snapshot version. */
  readonly ageSeconds: number;
  readonly clusters: number;
  readonly staleClusters: number;
  /** Whether the store answered on its last use; undefined for a source that cannot lose it. */
  readonly storeConnected: boolean | undefined;
}

export class RouterMetrics {
  readonly requests = { "1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 };
  readonly upstreamErrors: Record<UpstreamErrorKind, number> = { connect: 0, timeout: 0, transport: 0 };
  retries = 0;
  ejections = 0;
  /** Upgraded connections (WebSocket) being proxied now; their 101s count in requests as class 1xx. */
  upgradedConnections = 0;

  countResponse(status: number): void {
    if (status < 200) this.requests["1xx"]++;
    else if (status < 300) this.requests["2xx"]++;
    else if (status < 400) this.requests["3xx"]++;
    else if (status < 500) this.requests["4xx"]++;
    else this.requests["5xx"]++;
  }

  render(gauges: { inFlight: number; ejected: number; snapshot: SnapshotGauges }): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric(
      "edgeslice_requests_total",
      "counter",
      "Responses sent to clients by status class.",
      Object.entries(this.requests).map(([klass, n]) => [`{class="${klass}"}`, n]),
    );
    metric(
      "edgeslice_upstream_errors_total",
      "counter",
      "Failed upstream attempts by kind.",
      Object.entries(this.upstreamErrors).map(([kind, n]) => [`{kind="${kind}"}`, n]),
    );
    metric("edgeslice_retries_total", "counter", "Attempts on another backend after a failure.", [
      ["", this.retries],
    ]);
    metric("edgeslice_ejections_total", "counter", "Backends ejected after consecutive failures.", [
      ["", this.ejections],
    ]);
    metric("edgeslice_ejected_backends", "gauge", "Backends currently ejected.", [["", gauges.ejected]]);
    metric("edgeslice_in_flight_requests", "gauge", "Upstream requests waiting for response headers.", [
      ["", gauges.inFlight],
    ]);
    metric("edgeslice_upgraded_connections", "gauge", "Upgraded (WebSocket) connections being proxied.", [
      ["", this.upgradedConnections],
    ]);
    const s = gauges.snapshot;
    metric("edgeslice_snapshot_loaded", "gauge", "1 when a store snapshot was ever loaded.", [
      ["", s.loaded ? 1 : 0],
    ]);
    metric("edgeslice_snapshot_version", "gauge", "Version of the snapshot in use.", [["", s.version]]);
    metric("edgeslice_snapshot_age_seconds", "gauge", "Seconds since the snapshot in use was first seen.", [
      ["", s.ageSeconds],
    ]);
    if (s.storeConnected !== undefined) {
      metric("edgeslice_store_connected", "gauge", "1 while the store answers; 0 means serving last known.", [
        ["", s.storeConnected ? 1 : 0],
      ]);
    }
    metric("edgeslice_clusters", "gauge", "Clusters in the snapshot by staleness.", [
      ['{stale="false"}', s.clusters - s.staleClusters],
      ['{stale="true"}', s.staleClusters],
    ]);
    return `${lines.join("\n")}\n`;
  }
}

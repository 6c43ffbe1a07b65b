import type { MetricFamily } from "../../../lib/prometheus.js";

/** PORT's listener and the TLS ports' (HTTPS_PORT, HTTPS_LISTENER_PORTS). */
export type ListenerName = "http" | "https";

/**
 * What is open on each listener now: client connections (TCP, counted from the accept to the close, whatever
 * protocol they speak) and HTTP/2 streams. The Node listeners move the numbers (node/listener-counts.ts).
 */
export class ListenerGauges {
  readonly connections: Record<ListenerName, number> = { http: 0, https: 0 };
  readonly streams: Record<ListenerName, number> = { http: 0, https: 0 };

  families(): MetricFamily[] {
    const byListener = (values: Record<ListenerName, number>) =>
      Object.entries(values).map(([listener, value]) => ({ labels: { listener }, value }));
    return [
      {
        name: "edgeslice_client_connections",
        type: "gauge",
        help: "Client connections open now, by listener (http: PORT; https: the TLS ports).",
        samples: byListener(this.connections),
      },
      {
        name: "edgeslice_http2_streams",
        type: "gauge",
        help: "HTTP/2 streams of clients open now, by listener.",
        samples: byListener(this.streams),
      },
    ];
  }
}

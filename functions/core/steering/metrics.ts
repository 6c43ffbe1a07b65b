import { type CounterChild, CounterFamily, type MetricFamily } from "../../../lib/prometheus.js";
import type { SteeringState } from "./cluster-track.js";

/**
 * The steering series: every steered request counted by its Service, policy, chosen cluster and reason, and
 * per cluster what steering sees of it (its latency EWMA, whether it is stepped over). Labels come from the
 * store (Service, cluster) or fixed sets (policy, reason).
 */
export class SteeringMetrics {
  readonly #decisions = new CounterFamily(
    "edgeslice_steering_decisions_total",
    "Requests steered across clusters, by Service, policy, the cluster chosen first and why.",
    ["service", "policy", "cluster", "reason"],
  );
  #state: SteeringState | undefined;

  /** The counter of one (service, policy, cluster, reason), resolved once per memoised selection. */
  decision(service: string, policy: string, cluster: string, reason: string): CounterChild {
    return this.#decisions.child(service, policy, cluster, reason);
  }

  /** Every decision counted so far. */
  decisions(): { service: string; policy: string; cluster: string; reason: string; count: number }[] {
    return [...this.#decisions.children()].map((child) => ({
      service: child.labels.service ?? "",
      policy: child.labels.policy ?? "",
      cluster: child.labels.cluster ?? "",
      reason: child.labels.reason ?? "",
      count: child.value,
    }));
  }

  /** The state whose clusters the gauges show. */
  observe(state: SteeringState): void {
    this.#state = state;
  }

  *families(): Generator<MetricFamily> {
    yield this.#decisions.family();
    const state = this.#state;
    if (!state) return;
    const now = state.now();
    const tracks = state.tracks();
    yield {
      name: "edgeslice_cluster_latency_ewma_seconds",
      type: "gauge",
      help: "EWMA of the time to response head of the attempts steered to each cluster (this process or isolate).",
      samples: tracks
        .filter((track) => track.ewmaMs !== undefined)
        .map((track) => ({ labels: { cluster: track.name }, value: (track.ewmaMs ?? 0) / 1000 })),
    };
    yield {
      name: "edgeslice_cluster_stepped_over",
      type: "gauge",
      help: "1 while steering steps over a cluster whose attempts failed (recovering included), 0 while healthy.",
      samples: tracks.map((track) => ({
        labels: { cluster: track.name },
        value: track.state(now) === "healthy" ? 0 : 1,
      })),
    };
  }
}

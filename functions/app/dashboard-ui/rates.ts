import type { ServiceTotals } from "../../core/observability/request-metrics.js";
import type { DashboardSteering } from "../admin-steering-view.js";
import { el, fill, row } from "./dom.js";

/**
 * The tables drawn from the difference of two answers: request rates and error ratios per Service (the
 * cumulative counters between two refreshes over the time between them), and each steered Service's share of
 * requests per first-chosen cluster since the last refresh (all so far on the first).
 */
export class RefreshRates {
  #previous: { readonly at: number; readonly totals: ReadonlyMap<string, ServiceTotals> } | null = null;
  #previousSteering: ReadonlyMap<string, number> | null = null;

  /** The next request rates start over (a new token: the page measures afresh). */
  forgetRequests(): void {
    this.#previous = null;
  }

  renderServices(services: readonly ServiceTotals[], now: number): void {
    const previous = this.#previous;
    const dt = previous ? (now - previous.at) / 1000 : 0;
    const totals = new Map<string, ServiceTotals>();
    const byService = new Map<string, { requests: number; errors: number; clusters: string[] }>();
    for (const totalsOf of services) {
      const key = `${totalsOf.service}\u0000${totalsOf.cluster}`;
      totals.set(key, totalsOf);
      const before = previous?.totals.get(key);
      let requests = totalsOf.requests - (before ? before.requests : 0);
      let errors = totalsOf.errors - (before ? before.errors : 0);
      // A router restart resets the counters: count everything since then, as Prometheus' rate() does.
      if (requests < 0 || errors < 0) {
        requests = totalsOf.requests;
        errors = totalsOf.errors;
      }
      let entry = byService.get(totalsOf.service);
      if (!entry) {
        entry = { requests: 0, errors: 0, clusters: [] };
        byService.set(totalsOf.service, entry);
      }
      entry.requests += requests;
      entry.errors += errors;
      entry.clusters.push(
        (totalsOf.cluster || "router") + (dt > 0 ? ` ${(requests / dt).toFixed(1)}/s` : ""),
      );
    }
    this.#previous = { at: now, totals };
    const rows = [...byService].map(([name, entry]) => {
      const rate = dt > 0 ? (entry.requests / dt).toFixed(1) : "measuring";
      const ratio =
        dt > 0 && entry.requests > 0 ? `${((100 * entry.errors) / entry.requests).toFixed(1)} %` : "-";
      const ratioCell = el("span", ratio, dt > 0 && entry.errors > 0 ? "bad" : "");
      return row([name || "(no route)", rate, ratioCell, entry.clusters.join(", ")]);
    });
    fill("services", rows, "no requests yet");
  }

  renderSteering(steering: DashboardSteering | null): void {
    if (!steering) {
      fill("steering", [], "not available");
      return;
    }
    const states = new Map(steering.clusters.map((cluster) => [cluster.name, cluster]));
    const counts = new Map<string, number>();
    const byService = new Map<string, SteeredService>();
    for (const decision of steering.decisions) {
      const key = `${decision.service}\u0000${decision.cluster}\u0000${decision.reason}`;
      counts.set(key, decision.count);
      const before = this.#previousSteering?.get(key) ?? 0;
      let n = decision.count - before;
      if (n < 0) n = decision.count;
      let entry = byService.get(decision.service);
      if (!entry) {
        entry = { policy: decision.policy, total: 0, clusters: {}, reasons: {} };
        byService.set(decision.service, entry);
      }
      entry.total += n;
      entry.clusters[decision.cluster] = (entry.clusters[decision.cluster] ?? 0) + n;
      entry.reasons[decision.reason] = (entry.reasons[decision.reason] ?? 0) + n;
    }
    this.#previousSteering = counts;
    const note = (name: string) => {
      const cluster = states.get(name);
      if (!cluster) return "";
      return (
        (cluster.ewmaMs !== null ? ` (${cluster.ewmaMs} ms)` : "") +
        (cluster.state !== "healthy" ? ` ${cluster.state}` : "")
      );
    };
    const rows = [...byService].map(([name, entry]) =>
      row([
        name,
        entry.policy,
        shares(entry.clusters, entry.total, note),
        shares(entry.reasons, entry.total),
      ]),
    );
    fill("steering", rows, "no steered requests yet");
  }
}

interface SteeredService {
  readonly policy: string;
  total: number;
  readonly clusters: Record<string, number>;
  readonly reasons: Record<string, number>;
}

function shares(
  counts: Readonly<Record<string, number>>,
  total: number,
  note?: (key: string) => string,
): string {
  return Object.keys(counts)
    .sort()
    .map((key) => {
      const percent = total > 0 ? `${((100 * (counts[key] ?? 0)) / total).toFixed(1)} %` : "-";
      return `${key} ${percent}${note ? note(key) : ""}`;
    })
    .join(" \u00b7 ");
}

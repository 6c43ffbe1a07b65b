import { parseGeoPoint } from "../../store/places.js";
import type { SteeringState } from "../core/steering/cluster-track.js";
import type { SteeringMetrics } from "../core/steering/metrics.js";
import type { ClientLocation } from "../core/steering/origin.js";

/** What the dashboard shows of steering: each tracked cluster's state, and the decisions counted so far. */
export interface DashboardSteering {
  readonly clusters: readonly {
    readonly name: string;
    readonly state: string;
    readonly ewmaMs: number | null;
    readonly attempts: number;
    readonly failures: number;
  }[];
  /** Cumulative: the page shares out the difference between two refreshes, as it does with rates. */
  readonly decisions: readonly {
    readonly service: string;
    readonly policy: string;
    readonly cluster: string;
    readonly reason: string;
    readonly count: number;
  }[];
}

export function steeringView(state: SteeringState, metrics: SteeringMetrics): DashboardSteering {
  const now = state.now();
  return {
    clusters: state.tracks().map((track) => {
      const health = track.health(now);
      const ewma = track.ewmaMs;
      return {
        name: track.name,
        state: health.state,
        ewmaMs: ewma === undefined ? null : Math.round(ewma * 10) / 10,
        attempts: health.attempts,
        failures: health.failures,
      };
    }),
    decisions: metrics.decisions(),
  };
}

/** explain's `client=lat,long` and `continent=XX`: where the request would come from; a bad value is ignored. */
export function explainClient(
  point: string | undefined,
  continent: string | undefined,
): ClientLocation | undefined {
  const parsed = point === undefined ? undefined : parseGeoPoint(point);
  const location: ClientLocation = {
    ...(parsed?.ok ? { point: parsed.value } : {}),
    ...(continent && /^[A-Z]{2}$/.test(continent) ? { continent } : {}),
  };
  return Object.keys(location).length > 0 ? location : undefined;
}

import type { ClusterPlace, GeoPoint } from "../../../store/places.js";
import type { SteeringPolicy } from "../../../store/steering.js";
import type { SnapshotSource } from "../../../store/store.js";
import type { Selection } from "../selection/selection.js";
import { type ClusterPlaces, placesOf } from "../trust/cluster-places.js";
import { SteeringState } from "./cluster-track.js";
import type { SteeringMetrics } from "./metrics.js";
import type { ClientLocation } from "./origin.js";
import type { SelectSteering } from "./plan.js";
import { type SteeringSettings, steeringSettings } from "./settings.js";
import { steerSelection } from "./steer.js";

/** Tuning of cross-cluster steering over the defaults (settings.ts). */
export type SteeringOverrides = Parameters<typeof steeringSettings>[0];

/** Cross-cluster steering as routing runs it: the state, where the router is, and the step per request. */
export interface RoutingSteering {
  readonly state: SteeringState;
  /** What selections are planned with: CLUSTER_STEERING and the state. */
  readonly planning: SelectSteering;
  /** ROUTER_LOCATION. */
  readonly routerLocation: GeoPoint | undefined;
  /** Each cluster's place: its heartbeat's, or CLUSTER_PLACES' for a cluster it lists (cluster-places.ts). */
  places(): ReadonlyMap<string, ClusterPlace> | undefined;
  /**
   * The selection one request uses: `selection` itself unless it is steered (steering/plan.ts), so a Service
   * with one cluster or local-first costs one property read here.
   */
  steer(selection: Selection, client: ClientLocation | undefined): Selection;
}

export interface RoutingSteeringDeps {
  readonly source: SnapshotSource;
  readonly config: {
    readonly clusterSteering?: SteeringPolicy;
    readonly routerLocation?: GeoPoint | undefined;
    readonly clusterPlaces?: ClusterPlaces | undefined;
  };
  readonly now: () => number;
  readonly random: () => number;
  readonly steering?: SteeringOverrides;
}

export function createRoutingSteering(deps: RoutingSteeringDeps, metrics: SteeringMetrics): RoutingSteering {
  const settings: SteeringSettings = steeringSettings(deps.steering);
  const state = new SteeringState(deps.now, settings);
  const routerLocation = deps.config.routerLocation;
  metrics.observe(state);
  const places = () => placesOf(deps.source.heartbeats?.(), deps.config.clusterPlaces);
  return {
    state,
    planning: { policy: deps.config.clusterSteering ?? "local-first", state },
    routerLocation,
    places,
    steer(selection, client) {
      const plan = selection.steering;
      if (!plan) return selection;
      return steerSelection(selection, plan, {
        client,
        routerLocation,
        // Each cluster's place, from its sync's heartbeat record (read apart from the snapshot) or CLUSTER_PLACES.
        places: places(),
        settings,
        random: deps.random,
        metrics,
      });
    },
  };
}

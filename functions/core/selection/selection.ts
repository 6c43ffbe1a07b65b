import type { IpFamily } from "../../../lib/ip.js";
import type { CounterChild } from "../../../lib/prometheus.js";
import type { FamilyRecord } from "../../../store/records.js";
import type { BackendProtocol } from "../../../store/services.js";
import type { ServiceSteering } from "../../../store/steering.js";
import type { ClusterTrack } from "../steering/cluster-track.js";
import type { SteeredPolicy, SteeringReason } from "../steering/decide.js";

/*
 * The shapes a selection is made of, apart from the code that builds them (select.ts) and steers them
 * (steering/), so that both import these and neither imports the other's types back.
 */

/** A backend's TLS: the BackendTLSPolicy (`namespace/name`) of its cluster in force on its port. */
export interface BackendTlsRef {
  readonly policy: string;
}

/** One pod the router may send to. `address` (`ip:port` / `[ip]:port`) keys in-flight and ejection state. */
export interface Backend {
  readonly address: string;
  readonly ip: string;
  readonly port: number;
  readonly cluster: string;
  /** What the backend speaks (store/services.ts); undefined: HTTP/1.1. */
  readonly protocol?: BackendProtocol | undefined;
  /** With protocol `https`: the port's BackendTLSPolicy, whose record of this cluster says how to verify it. */
  readonly tls?: BackendTlsRef | undefined;
  /**
   * With protocol `https`: the one Gateway the route is attached to, whose backend client certificate (if it
   * has one) is presented to the pod; undefined when the route names none or several.
   */
  readonly gateway?: string | undefined;
  /** A steered Service's backends only: the cluster's health and latency its attempts feed (retry-loop.ts). */
  readonly track?: ClusterTrack | undefined;
}

export type TierName = "local-zone" | "local" | "remote" | "all" | "fallback";

export interface Tier {
  readonly name: TierName;
  readonly backends: readonly Backend[];
}

export interface FamilyChoice {
  readonly family: IpFamily | undefined;
  readonly fallback: boolean;
  readonly reason: string;
}

export interface ClusterChoice extends FamilyChoice {
  readonly cluster: string;
  readonly service: string;
  readonly stale: boolean;
  readonly local: boolean;
}

export type ZoneHints =
  | "applied"
  | "no-zone-configured"
  | "no-local-cluster"
  | "not-every-endpoint-hinted"
  | "fallback-endpoints"
  | "no-endpoint-for-zone";

/** One cluster's backends of the Service port a backendRef names. */
export interface BackendCandidate {
  readonly cluster: string;
  readonly stale: boolean;
  readonly service: string;
  /** The port's backends per family in this cluster. */
  readonly backends: Readonly<Record<IpFamily, FamilyRecord>>;
  /** The port's protocol in this cluster, or h2c for every backend of a GRPCRoute. */
  readonly protocol?: BackendProtocol | undefined;
  /** The port's BackendTLSPolicy in this cluster (protocol `https`). */
  readonly tls?: BackendTlsRef | undefined;
  /** With `tls`: the route's one Gateway (Backend.gateway). */
  readonly gateway?: string | undefined;
  /** The cluster's record's steering annotations (store/steering.ts). */
  readonly steering?: ServiceSteering | undefined;
}

/** Ordered tiers (try the first tier with a usable backend) and why they look the way they do. */
export interface Selection {
  /** The Service (`ns/name`) the backendRef names: the `service` label of the request's metrics. */
  readonly service: string;
  readonly tiers: readonly Tier[];
  readonly clusters: readonly ClusterChoice[];
  readonly zoneHints: ZoneHints;
  /** Distinct backend addresses across all tiers: the candidate set the ejection cap is computed on. */
  readonly addresses: readonly string[];
  /**
   * No cluster the route is served from has a record of this Service port: the sync publishes a backendRef
   * to a Service its cluster lacks (so copies of a route merge across clusters during a rollout), and when
   * none has it the backendRef cannot be resolved anywhere: answered 500 like an invalid backendRef
   * (Gateway API HTTPRouteRule.backendRefs). A Service that exists with no ready endpoint is 503.
   */
  readonly unresolved: boolean;
  /**
   * Backends were left out because they need TLS (a BackendTLSPolicy) and this router opens none to backends
   * (RoutingDeps.backendTls): when none is left, the request is refused rather than sent in cleartext.
   */
  readonly backendTlsRefused?: true | undefined;
  /** The served route and rule whose backendRef this is (select.ts); undefined for one no route names. */
  readonly route?: { readonly id: string; readonly rule: number } | undefined;
  /** A Service steered across clusters (steering/plan.ts): each request's selection derives from it (steer.ts). */
  readonly steering?: SteeringPlan | undefined;
  /** On a steered request's selection: the cluster chosen first, and why. */
  readonly steered?: SteeredChoice | undefined;
}

/** One cluster a steered Service can be sent to: its ready backends, as tiers, and what steering weighs. */
export interface SteeredCluster {
  readonly name: string;
  readonly local: boolean;
  /** weighted: the annotation's share (0 when it lists the cluster not), 1 each without weights. */
  readonly weight: number;
  /** The own cluster's zone tier (when hints apply) and the rest; one tier for any other cluster. */
  readonly tiers: readonly Tier[];
  readonly track: ClusterTrack;
}

/** Where a Service's policy came from: its clusters' annotations, or the router's CLUSTER_STEERING. */
export type SteeringSource =
  | { readonly from: "annotation" }
  | { readonly from: "router" }
  /** The clusters publishing the Service annotate it differently: none of them decides alone. */
  | { readonly from: "router"; readonly disagreement: readonly { cluster: string; steering: string }[] };

/**
 * How one selection (a Service port of a served route, per snapshot) is steered across clusters; built once
 * with the selection, so a request only looks things up. `variants` memoises the per-request selections by
 * their order and reason (steer.ts).
 */
export interface SteeringPlan {
  readonly policy: SteeredPolicy;
  readonly source: SteeringSource;
  /** Clusters with ready endpoints, in the candidates' order; at least two. */
  readonly clusters: readonly SteeredCluster[];
  /** Terminating endpoints of every cluster: after all ready ones, whatever the order (kube-proxy's rule). */
  readonly fallback: Tier | undefined;
  readonly variants: Map<number, Selection>;
}

/** What a steered request's selection says of its decision (the variant's, shared by every request alike). */
export interface SteeredChoice {
  readonly cluster: string;
  readonly reason: SteeringReason;
  /** edgeslice_steering_decisions_total{service, policy, cluster, reason}. */
  readonly counter: CounterChild;
}

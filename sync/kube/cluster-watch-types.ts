import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../../lib/logger.js";
import type { ClusterCache } from "../translate/types.js";
import type { RouteKind } from "./kinds.js";
import type { KubeApi } from "./kube-api.js";
import type { Reachability } from "./reachability.js";
import type { ReflectorTuning } from "./reflector-types.js";

/**
 * How each reflector of the watch runs (reflector-types.ts ReflectorTuning): WATCH_TIMEOUT_SECONDS,
 * WATCH_STALL_GRACE_MS, retry delays, the RBAC report bound, page size, and the relist/restart observer.
 */
type ClusterWatchTuning = Pick<
  ReflectorTuning,
  | "watchTimeoutSeconds"
  | "stallGraceMs"
  | "retry"
  | "forbiddenReportMs"
  | "pageSize"
  | "observer"
  | "random"
  | "now"
>;

export interface ClusterWatchOptions extends ClusterWatchTuning {
  readonly kubeConfig: KubeConfig;
  /** The HTTP client to use; one over kubeConfig by default. */
  readonly api?: KubeApi | undefined;
  readonly logger: Logger;
  /** Shared with leader election so every request tells whether the API server answers. */
  readonly reachability?: Reachability | undefined;
  /** undefined or [] = all namespaces; otherwise one reflector pair per namespace (WATCH_NAMESPACES). */
  readonly namespaces?: readonly string[] | undefined;
  /**
   * After the cache changed for a Service or one of its slices (fired for the initial LIST too), with when
   * the change was read from the API server. A slice relabelled to another Service, or deleted, fires for
   * the old Service too.
   */
  readonly onServiceChanged: (namespace: string, name: string, receivedAt: number) => void;
  /**
   * After the cache changed for an object routes are made of: a Service (its annotations, ports, age), a
   * Gateway API object, a Namespace, an IngressClass or an Ingress.
   */
  readonly onRoutesChanged?: ((receivedAt: number) => void) | undefined;
  /**
   * Also watch GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces, IngressClasses and
   * Ingresses (true by default). A kind the API server does not serve (the Gateway API CRDs not installed)
   * is logged once per API group, read as empty, and listed again every missingKindRetryMs.
   */
  readonly routeKinds?: boolean | undefined;
  /** 30 s by default. */
  readonly missingKindRetryMs?: number | undefined;
  /** Every resyncIntervalMs once synced: recompute everything. */
  readonly onResync?: (() => void) | undefined;
  /** 5 min by default, 0 = off. */
  readonly resyncIntervalMs?: number | undefined;
  /** Every list/watch failure (the reflector retries by itself; this is for metrics). */
  readonly onError?: ((error: unknown) => void) | undefined;
}

export interface ClusterWatchHealth {
  /** The first full LIST of every reflector has been applied. */
  readonly synced: boolean;
  /** Last list result, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Watch restarts after errors, stalls or an expired resourceVersion. */
  readonly restarts: number;
  /** Reflectors the API server has refused (401/403) for longer than forbiddenReportMs. */
  readonly refused: readonly string[];
  /** Resources the API server does not serve (their CRDs are not installed). */
  readonly missing: readonly string[];
}

export interface ClusterWatch extends ClusterCache {
  /** The cached object of a route-relevant kind (with its status), for the status writer. */
  routeObject(kind: RouteKind, namespace: string | undefined, name: string): object | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly synced: boolean;
  /** For /readyz and /metrics. */
  health(): ClusterWatchHealth;
}

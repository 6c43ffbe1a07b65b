import type { BackoffPolicy } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import type { KubeApi } from "./kube-api.js";
import type { Reachability } from "./reachability.js";

/** How every reflector of a cluster watch runs; the defaults are client-go's reflector habits. */
export interface ReflectorTuning {
  readonly api: KubeApi;
  readonly logger: Logger;
  readonly reachability: Reachability;
  /** 300 by default: each watch asks the server to end it after [T, 2T) s, then resumes (client-go's min). */
  readonly watchTimeoutSeconds?: number | undefined;
  /** 30 s by default: a watch silent for its timeout plus this is half-dead, aborted and resumed. */
  readonly stallGraceMs?: number | undefined;
  /** Items per LIST page (limit/continue). */
  readonly pageSize?: number | undefined;
  /** After a failure the API server may recover from (unreachable, 5xx, 429, 401/403): 200 ms .. 1 s. */
  readonly retry?: BackoffPolicy | undefined;
  /** A 401/403 that persists this long (10 s by default) is reported as an RBAC problem, once. */
  readonly forbiddenReportMs?: number | undefined;
  readonly observer?: ReflectorObserver | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
}

/** What a reflector reports for metrics, labelled by its resource ("services", "endpointslices"). */
export interface ReflectorObserver {
  relisted?(resource: string, reason: string): void;
  watchRestarted?(resource: string, reason: string): void;
  failed?(resource: string, error: unknown): void;
  /** A list answered 404: the kind is not served (its CRD is not installed). */
  missing?(resource: string): void;
}

export interface ReflectorTarget {
  /** Names the reflector in logs, e.g. "services (shop)". */
  readonly label: string;
  readonly resource: string;
  /** The collection path, e.g. /api/v1/namespaces/shop/services. */
  readonly path: string;
  readonly onUpsert: (object: unknown, receivedAt: number) => void;
  readonly onDelete: (object: unknown, receivedAt: number) => void;
  /**
   * A kind the cluster may not serve (a CRD, such as the Gateway API's): a 404 on its list means it is not
   * installed. Then everything the reflector delivered is deleted, it counts as settled (empty), tells
   * `onMissing` and lists again every `retryMs`; `onServed` once it lists again. A kind it served keeps what
   * it served through 404s shorter than the report bound (a restarting API server serves CRDs late). A refusal (401/403) that
   * persists past the report bound settles it too, empty: the rest of the sync must not wait for it.
   */
  readonly optional?: {
    readonly retryMs: number;
    /**
     * A refusal (401/403) before the first sync means the sync may not read this kind by design, not a broken
     * RBAC: read as empty at once, like a 404, and not reported as an RBAC problem. For the cluster-scoped kinds a sync watching
     * chosen namespaces (WATCH_NAMESPACES with Roles only) has no rule for.
     */
    readonly unreadableWhenRefused?: boolean;
    /** Not served (404), or refused by design (`unreadableWhenRefused`). */
    readonly onMissing: (why: "not served" | "refused") => void;
    /** Listed: its first list, and the first after it was missing. */
    readonly onServed: () => void;
  };
}

export interface Reflector {
  readonly label: string;
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  readonly whenSynced: Promise<void>;
  /**
   * The sync may go on without waiting for this reflector any longer: it synced, or (an optional kind) it is
   * not served or refused. Resolves once.
   */
  readonly settled: boolean;
  readonly whenSettled: Promise<void>;
  /** An optional kind the API server does not serve (its list answered 404). */
  readonly missing: boolean;
  /** Last list, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Watches restarted for a failure, a stall or an expired resourceVersion (not a server timeout). */
  readonly restarts: number;
  /** Since when the API server has refused this reflector (401/403), undefined when it has not. */
  readonly forbiddenSince: number | undefined;
}

/** ReflectorTuning with its defaults filled in (the figures its fields' comments give). */
export interface ReflectorSettings extends ReflectorTuning {
  readonly watchTimeoutSeconds: number;
  readonly stallGraceMs: number;
  readonly pageSize: number;
  readonly forbiddenReportMs: number;
  readonly observer: ReflectorObserver;
  readonly random: () => number;
  readonly now: () => number;
}

export function reflectorSettings(tuning: ReflectorTuning): ReflectorSettings {
  return {
    ...tuning,
    watchTimeoutSeconds: tuning.watchTimeoutSeconds ?? 300,
    stallGraceMs: tuning.stallGraceMs ?? 30_000,
    pageSize: tuning.pageSize ?? 500,
    forbiddenReportMs: tuning.forbiddenReportMs ?? 10_000,
    observer: tuning.observer ?? {},
    random: tuning.random ?? Math.random,
    now: tuning.now ?? Date.now,
  };
}

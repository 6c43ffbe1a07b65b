import type { Logger } from "../../lib/logger.js";
import type { SyncMetrics } from "../metrics.js";
import type { DesiredRoutes } from "../translate/desired-routes.js";
import {
  gatewayClassStatus,
  gatewayStatus,
  httpRouteStatus,
  ingressStatus,
  policyStatus,
  sameStatus,
  statusOf,
} from "../translate/object-status.js";
import { collectionPath, KINDS, type RouteKind } from "./kinds.js";
import type { KubeApi } from "./kube-api.js";

export interface StatusWriterOptions {
  readonly api: KubeApi;
  /** The object as the informers cache it (status and resourceVersion included). */
  readonly cached: (kind: RouteKind, namespace: string | undefined, name: string) => object | undefined;
  /** Our GatewayClass controllerName, whose entries of HTTPRoute `status.parents` are ours. */
  readonly controllerName: string;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  /** Checked before each write: only the replica that publishes writes status. */
  readonly allowed?: () => boolean;
  /** After a write failed for another reason than a conflict, try everything again this much later. */
  readonly retryMs?: number;
  readonly now?: () => number;
}

export interface StatusWriter {
  /** The statuses every object should carry now; written in the background, the latest call wins. */
  update(statuses: DesiredRoutes["statuses"]): void;
  /** Waits for the write in progress; nothing is written after. */
  stop(): Promise<void>;
  /** Resolves once nothing is queued or being written (tests). */
  idle(): Promise<void>;
  /** How many objects' last writes are remembered (tests: the entries go with the objects). */
  remembered(): number;
}

type Target = {
  kind: RouteKind;
  namespace: string | undefined;
  name: string;
  desired: (object: unknown) => object;
};

const MAX_ATTEMPTS = 3;

/**
 * Writes the status subresource of our GatewayClasses, Gateways, HTTPRoutes and Ingresses (the leader only:
 * the reconciler hands desired states over while it publishes). Each object's status is merged with what it
 * carries (object-status.ts) and written only when that changes it; a 409 Conflict re-reads the object and
 * merges again, up to three times. Any other failure is logged, counted, and retried after `retryMs`.
 */
export function createStatusWriter(options: StatusWriterOptions): StatusWriter {
  const { api, logger, metrics, controllerName } = options;
  const now = options.now ?? Date.now;
  const retryMs = options.retryMs ?? 5_000;
  let latest: DesiredRoutes["statuses"] | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /** What we last wrote per object, against which resourceVersion: skip it while the cache lags behind. */
  const written = new Map<string, { resourceVersion: string; status: string }>();

  const targets = (statuses: DesiredRoutes["statuses"]): Target[] => {
    const at = () => new Date(now()).toISOString();
    const list: Target[] = [];
    for (const [name, desired] of statuses.gatewayClasses) {
      list.push({
        kind: "GatewayClass",
        namespace: undefined,
        name,
        desired: (o) => gatewayClassStatus(o, desired, at()),
      });
    }
    for (const [key, desired] of statuses.gateways) {
      const [namespace, name = ""] = key.split("/");
      list.push({ kind: "Gateway", namespace, name, desired: (o) => gatewayStatus(o, desired, at()) });
    }
    const routeKinds = [
      ["HTTPRoute", statuses.httpRoutes],
      ["GRPCRoute", statuses.grpcRoutes ?? new Map()],
      ["TLSRoute", statuses.tlsRoutes ?? new Map()],
    ] as const;
    for (const [kind, routeStatuses] of routeKinds) {
      for (const [key, parents] of routeStatuses) {
        const [namespace, name = ""] = key.split("/");
        // GRPCRoute's and TLSRoute's status is HTTPRoute's (RouteStatus): the same parents merge.
        list.push({
          kind,
          namespace,
          name,
          desired: (o) => httpRouteStatus(o, parents, controllerName, at()),
        });
      }
    }
    for (const [key, ancestors] of statuses.backendTlsPolicies ?? new Map()) {
      const [namespace, name = ""] = key.split("/");
      list.push({
        kind: "BackendTLSPolicy",
        namespace,
        name,
        desired: (o) => policyStatus(o, ancestors, controllerName, at()),
      });
    }
    for (const [key, desired] of statuses.ingresses) {
      const [namespace, name = ""] = key.split("/");
      list.push({ kind: "Ingress", namespace, name, desired: (o) => ingressStatus(o, desired) });
    }
    return list;
  };

  const keyOf = (target: Target) => `${target.kind} ${target.namespace ?? ""}/${target.name}`;

  /** Writes one object's status if it differs; false when the write failed (retry later). */
  const writeOne = async (target: Target): Promise<boolean> => {
    const key = keyOf(target);
    let object: unknown = options.cached(target.kind, target.namespace, target.name);
    // Gone from the cache: a later object of the same name starts afresh.
    if (object === undefined) written.delete(key);
    for (let attempt = 1; object !== undefined && attempt <= MAX_ATTEMPTS; attempt++) {
      const status = target.desired(object);
      if (sameStatus(statusOf(object), status)) return true;
      const resourceVersion = String(
        (object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion ?? "",
      );
      const serialised = JSON.stringify(status);
      const last = written.get(key);
      if (last && last.resourceVersion === resourceVersion && last.status === serialised) return true;
      const { group, version } = KINDS[target.kind];
      const path = `${collectionPath(target.kind, target.namespace)}/${encodeURIComponent(target.name)}/status`;
      const body = {
        ...(object as object),
        apiVersion: group === "" ? version : `${group}/${version}`,
        kind: target.kind,
        status,
      };
      const response = await api.call("PUT", path, { body, timeoutMs: 10_000 });
      if (response.status === 200 || response.status === 201) {
        written.set(key, { resourceVersion, status: serialised });
        metrics.count("statusWrites");
        logger.debug("status written", { object: key });
        return true;
      }
      if (response.status === 404) {
        written.delete(key);
        return true;
      }
      if (response.status !== 409) {
        metrics.count("statusErrors");
        logger.warn("status write failed", { object: key, status: response.status, body: response.body });
        return false;
      }
      // Someone else wrote it meanwhile: merge into the current object.
      const fresh = await api.call("GET", path.slice(0, -"/status".length), { timeoutMs: 10_000 });
      object = fresh.status === 200 ? fresh.body : undefined;
    }
    if (object !== undefined) {
      metrics.count("statusErrors");
      logger.warn("status write kept conflicting; trying again later", { object: key });
      return false;
    }
    return true;
  };

  const drain = async () => {
    while (latest !== undefined && !stopped) {
      const statuses = latest;
      latest = undefined;
      let failed = false;
      const list = targets(statuses);
      // Objects deleted or no longer ours leave the statuses: forget what was written to them.
      const current = new Set(list.map(keyOf));
      for (const key of written.keys()) if (!current.has(key)) written.delete(key);
      for (const target of list) {
        if (stopped || !(options.allowed?.() ?? true)) return;
        const ok = await writeOne(target).catch((error: unknown) => {
          metrics.count("statusErrors");
          logger.warn("status write failed", { object: `${target.kind} ${target.name}`, error });
          return false;
        });
        failed ||= !ok;
      }
      if (failed && latest === undefined && !stopped) {
        if (retryTimer) clearTimeout(retryTimer);
        retryTimer = setTimeout(() => {
          retryTimer = undefined;
          writer.update(statuses);
        }, retryMs);
      }
    }
  };

  const kick = () => {
    if (running || stopped || latest === undefined) return;
    running = drain().finally(() => {
      running = undefined;
      kick();
    });
  };

  const writer: StatusWriter = {
    update(statuses) {
      if (stopped) return;
      // Newer statuses cover every object: a retry still pending would write older ones over them.
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      latest = statuses;
      kick();
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await running;
    },
    async idle() {
      while (running) await running;
    },
    remembered() {
      return written.size;
    },
  };
  return writer;
}

import {
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
} from "@kubernetes/client-node";
import { type BackoffPolicy, createBackoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { statusOf } from "./api-errors.js";
import { SupervisedWatch } from "./supervised-watch.js";

/** How every informer of a cluster watch is kept alive; the defaults are client-go's habits. */
export interface InformerTuning {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** Every list/watch failure (the informer restarts by itself; this is for metrics). */
  readonly onError?: ((error: unknown) => void) | undefined;
  /** 500 ms .. 30 s by default: capped exponential with full jitter, reset once a watch connects again. */
  readonly backoff?: BackoffPolicy | undefined;
  /**
   * 150 s by default: no event, bookmark or (re)connection for that long restarts the informer (a half-dead
   * connection never errors). Watches ask for bookmarks, so keep it above the server's bookmark interval
   * (kube-apiserver sends one about every minute).
   */
  readonly watchdogMs?: number | undefined;
  /**
   * 300 by default: the server ends each watch after 1-2x this (client-go does the same), and client-node
   * resumes it from the last resourceVersion.
   */
  readonly watchTimeoutSeconds?: number | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
}

/** One ListWatch kept alive: restarted with backoff after errors, and by a watchdog when its watch goes quiet. */
export interface SupervisedInformer {
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  readonly whenSynced: Promise<void>;
  /** Last list result, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Restarts after errors or a stalled watch. */
  readonly restarts: number;
}

export interface InformerTarget {
  /** Names the informer in logs, e.g. "services (shop)". */
  readonly label: string;
  /** The collection path ListWatch watches. */
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<KubernetesObject>>;
  readonly onUpsert: (object: unknown) => void;
  readonly onDelete: (object: unknown) => void;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/** Thrown by a LIST that finished after its informer was restarted: its result belongs to nobody. */
class StaleAttemptError extends Error {
  constructor() {
    super("list finished after its informer was restarted");
  }
}

/**
 * client-node's ListWatch stops on any list/watch error; here it is restarted with backoff and resumes from
 * its last resourceVersion. A 410 Gone (HTTP status or ERROR event on the stream) makes ListWatch drop its
 * resourceVersion and LIST again; a 410 on the LIST itself arrives as an error and the restart lists again.
 * On a relist, objects gone from the server fire deletes.
 */
export function superviseInformer(target: InformerTarget, tuning: InformerTuning): SupervisedInformer {
  const { label } = target;
  const logger = tuning.logger;
  const now = tuning.now ?? Date.now;
  const random = tuning.random ?? Math.random;
  const backoff = createBackoff(tuning.backoff ?? DEFAULT_BACKOFF, random);
  const watchdogMs = tuning.watchdogMs ?? 150_000;
  const watchTimeoutSeconds = tuning.watchTimeoutSeconds ?? 300;

  let running = false;
  let synced = false;
  let lastEventAt: number | null = null;
  let lastActivityAt = now();
  let restarts = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let watchdogTimer: NodeJS.Timeout | undefined;
  let markSynced: () => void = () => {};
  const whenSynced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const sawActivity = () => {
    lastActivityAt = now();
    lastEventAt = lastActivityAt;
  };

  const watch = new SupervisedWatch(tuning.kubeConfig, {
    query: () => ({
      allowWatchBookmarks: true,
      // client-go spreads watch lifetimes over [min, 2*min) so replicas do not reconnect in lockstep.
      timeoutSeconds: Math.floor(watchTimeoutSeconds * (1 + random())),
    }),
    onWatchRequested: () => {
      // ListWatch asks for a watch only after it applied a LIST, so the first request means "synced".
      if (!synced) {
        synced = true;
        markSynced();
        logger.info("informer synced", { informer: label });
      }
    },
    onConnected: () => {
      lastActivityAt = now();
      backoff.reset();
    },
    onEvent: sawActivity,
  });

  const listFn = async () => {
    const generation = watch.generation;
    lastActivityAt = now();
    const list = await target.list();
    if (generation !== watch.generation) throw new StaleAttemptError();
    sawActivity();
    return list;
  };
  const informer = new ListWatch<KubernetesObject>(target.path, watch, listFn, false);
  informer.on("add", (object) => target.onUpsert(object));
  informer.on("update", (object) => target.onUpsert(object));
  informer.on("delete", (object) => target.onDelete(object));
  informer.on("error", (error) => onFailure(error));

  function launch(): void {
    watch.activate();
    lastActivityAt = now();
    informer.start().catch((error: unknown) => onFailure(error));
  }

  async function restart(reason: string): Promise<void> {
    if (!running) return;
    restarts += 1;
    watch.deactivate();
    await informer.stop();
    if (!running) return;
    logger.info("restarting informer", { informer: label, reason, restarts });
    launch();
  }

  function onFailure(error: unknown): void {
    if (!running || error instanceof StaleAttemptError || retryTimer) return;
    watch.deactivate();
    const status = statusOf(error);
    const delayMs = backoff.next();
    const fields = { informer: label, status, error, retryInMs: delayMs, attempt: backoff.attempts };
    if (status === 401 || status === 403) {
      logger.error(
        "informer not authorised: check the token and RBAC (list/watch services, endpointslices)",
        fields,
      );
    } else {
      logger.warn("informer failed", fields);
    }
    try {
      tuning.onError?.(error);
    } catch (callbackError) {
      logger.error("onError threw", { error: callbackError });
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void restart(status === undefined ? "error" : `error ${status}`);
    }, delayMs);
  }

  function checkWatchdog(): void {
    if (!running || retryTimer) return;
    const quietMs = now() - lastActivityAt;
    if (quietMs <= watchdogMs) return;
    logger.warn("watch stalled: no event or bookmark, restarting", { informer: label, quietMs });
    lastActivityAt = now();
    void restart("stalled");
  }

  return {
    start() {
      if (running) return;
      running = true;
      launch();
      watchdogTimer = setInterval(checkWatchdog, Math.max(10, Math.floor(watchdogMs / 4)));
    },
    async stop() {
      running = false;
      if (retryTimer) clearTimeout(retryTimer);
      if (watchdogTimer) clearInterval(watchdogTimer);
      retryTimer = undefined;
      watchdogTimer = undefined;
      watch.deactivate();
      await informer.stop();
    },
    get synced() {
      return synced;
    },
    whenSynced,
    get lastEventAt() {
      return lastEventAt;
    },
    get restarts() {
      return restarts;
    },
  };
}

import { type KubeConfig, Watch } from "@kubernetes/client-node";

type WatchCallback = Parameters<Watch["watch"]>[2];
type WatchDone = Parameters<Watch["watch"]>[3];

/** What the informer supervisor learns from, and adds to, each watch request. */
export interface SupervisedWatchHooks {
  /** Extra query parameters for every watch request (bookmarks, a jittered timeout). */
  query(): Record<string, string | number | boolean>;
  /** ListWatch asked for a watch (it does so only after applying a LIST). */
  onWatchRequested(): void;
  /** A watch of the current generation connected. */
  onConnected(): void;
  /** An event, bookmark included, arrived on a watch of the current generation. */
  onEvent(): void;
}

/**
 * client-node's Watch with the supervision ListWatch lacks: it asks for bookmarks, reports activity, and
 * can cut off every request of an earlier generation. ListWatch keeps only the last watch's controller and
 * can start a new watch while an old request is still connecting; after `deactivate()` those late requests
 * are aborted and their callbacks ignored, so exactly one watch feeds the cache.
 */
export class SupervisedWatch extends Watch {
  private currentGeneration = 0;
  private active = false;
  private readonly live = new Set<AbortController>();

  constructor(
    config: KubeConfig,
    private readonly hooks: SupervisedWatchHooks,
  ) {
    super(config);
  }

  get generation(): number {
    return this.currentGeneration;
  }

  activate(): void {
    this.active = true;
  }

  deactivate(): void {
    this.currentGeneration += 1;
    this.active = false;
    for (const controller of this.live) controller.abort();
    this.live.clear();
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    const generation = this.currentGeneration;
    if (!this.active) return abortedController();
    this.hooks.onWatchRequested();
    const current = () => generation === this.currentGeneration;
    let finished = false;
    let controller: AbortController | undefined;
    const result = await super.watch(
      path,
      { ...queryParams, ...this.hooks.query() },
      (phase, object, raw) => {
        if (!current()) return;
        this.hooks.onEvent();
        callback(phase, object, raw);
      },
      (error: unknown) => {
        finished = true;
        if (controller) this.live.delete(controller);
        if (current()) done(error);
      },
    );
    controller = result;
    if (!current()) {
      result.abort();
      return result;
    }
    if (!finished) {
      this.live.add(result);
      this.hooks.onConnected();
    }
    return result;
  }
}

function abortedController(): AbortController {
  const controller = new AbortController();
  controller.abort();
  return controller;
}

import type { PublishPipeline } from "./pipeline.js";

/** The part of an ioredis client this needs: its connection events. */
interface ReconnectingStore {
  on(event: "ready", listener: () => void): unknown;
}

/**
 * One publish loop for every source of a cluster (its informers in live mode, a folder for `--from DIR`):
 * each time Redis (re)connects it may have restarted empty, so everything is compared and what is missing
 * re-pushed, and the heartbeat beats only once the store holds it all again. Routers find a cluster by its
 * heartbeat key, which such a restart lost: beating first would announce the cluster with no Services, and
 * they would answer no_route for all of it. (A store that loses the keys without a reconnect, FLUSHALL, is
 * caught by the next beat: the pipeline's repushWhenStoreLost.)
 *
 * @example
 * const pipeline = createPublishPipeline({ ...options, repushWhenStoreLost: true });
 * await pipeline.reconciler.enable();
 * pipeline.heartbeat.start();
 * repushOnReconnect(redis, pipeline);
 */
export function repushOnReconnect(redis: ReconnectingStore, pipeline: PublishPipeline): void {
  redis.on("ready", () => {
    if (pipeline.reconciler.enabled) pipeline.repushBeforeBeating();
  });
}

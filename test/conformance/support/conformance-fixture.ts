import { Redis } from "ioredis";
import { Pool } from "undici";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { createEchoFleet, type EchoBackend, type EchoFleet } from "../../e2e/support/echo-backends.js";
import { type Answer, hostClient, type SendOptions } from "../../e2e/support/host-client.js";
import { type KubeCluster, startKubeCluster } from "../../e2e/support/kube-cluster.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { BACKEND_SERVICES, baseObjects, serviceObjects } from "./conformance-base.js";

/**
 * One official conformance test's world, started once per file: the base manifests (conformance-base.ts)
 * and the test's own objects on a fake API server, the live sync publishing them to Redis with
 * GATEWAY_ADDRESSES set, and one Node router per entry of `routers` (its GATEWAYS setting, or every Gateway),
 * in front of loopback echo backends that answer with `namespace/service` and what they received.
 */
export interface Conformance {
  readonly cluster: KubeCluster;
  /** The store the sync publishes to (cluster `east`), for tests that check records. */
  readonly store: { readonly redis: Redis; readonly prefix: string };
  /** A request through router `router` (default the first), Host `host` as the client sends it. */
  send(request: ConformanceRequest): Promise<Answer>;
  /** Repeats `request` until `done` holds for its answer (the sync published, the router reloaded). */
  until(request: ConformanceRequest, done: (answer: Answer) => boolean, timeoutMs?: number): Promise<Answer>;
  /** The URL router `router` (default the first) listens at, for clients that need their own socket. */
  routerUrl(router?: string): string;
  /** Requests backend `namespace/service` received so far (mirrored copies included). */
  hits(backend: string): number;
  stop(): Promise<void>;
}

export interface ConformanceRequest extends SendOptions {
  readonly host: string;
  readonly path: string;
  readonly router?: string;
}

export async function startConformance(options: {
  readonly label: string;
  readonly objects: readonly ApplyInput[];
  /** More objects, written once the echo backends listen (Services of the test's own, at their ports). */
  readonly objectsAt?: (backends: ReadonlyMap<string, EchoBackend>) => readonly ApplyInput[];
  readonly routers?: Readonly<Record<string, string | undefined>>;
}): Promise<Conformance> {
  const prefix = uniquePrefix(`conf-${options.label}`);
  const fleet: EchoFleet = createEchoFleet();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const routers = new Map<string, { router: NodeRouter; pool: Pool }>();
  let cluster: KubeCluster | undefined;
  const stop = async () => {
    for (const { router, pool } of routers.values()) {
      await pool.destroy();
      await router.close();
    }
    await cluster?.stop();
    await fleet.closeAll();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  };
  try {
    const backends = await fleet.start(BACKEND_SERVICES.map((item) => `${item.namespace}/${item.name}`));
    cluster = await startKubeCluster({
      name: "east",
      prefix,
      redisUrl: REDIS_URL,
      env: { GATEWAY_ADDRESSES: "127.0.0.1", LOG_LEVEL: "error" },
    });
    const objects = [
      ...baseObjects(),
      ...serviceObjects(backends),
      ...options.objects,
      ...(options.objectsAt?.(backends) ?? []),
    ];
    for (const object of objects) cluster.kube.apply(object);
    for (const [name, gateways] of Object.entries(options.routers ?? { router: undefined })) {
      const config = parseRouterConfig({
        REDIS_URL,
        PORT: "0",
        EDGESLICE_PREFIX: prefix,
        LOG_LEVEL: "error",
        UPSTREAM_TRY_TIMEOUT_MS: "5000",
        ...(gateways ? { GATEWAYS: gateways } : {}),
      });
      const router = await startNodeRouter(config, {
        host: "127.0.0.1",
        logger: silentLogger,
        refreshIntervalMs: 100,
        drainMs: 200,
      });
      routers.set(name, { router, pool: new Pool(router.url, { connections: 8 }) });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const first = [...routers.keys()][0] as string;
  const send = (request: ConformanceRequest) => {
    const chosen = routers.get(request.router ?? first);
    if (!chosen) throw new Error(`no router ${request.router}`);
    return hostClient(chosen.pool, "").send(request.host, request.path, request);
  };
  return {
    cluster: cluster as KubeCluster,
    store: { redis, prefix },
    send,
    async until(request, done, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const answer = await send(request);
        if (done(answer) || Date.now() > deadline) return answer;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    routerUrl: (router = first) => {
      const chosen = routers.get(router);
      if (!chosen) throw new Error(`no router ${router}`);
      return chosen.router.url;
    },
    hits: (backend) => fleet.hitsByName().get(backend) ?? 0,
    stop,
  };
}

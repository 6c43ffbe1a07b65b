import { createJsonLogger, type Logger } from "../../../lib/logger.js";
import type { LiveSync } from "../../../sync/live.js";
import { type EndpointConditions, sliceObject } from "../../fake-kube/fixtures.js";
import { startLiveOn } from "../../fake-kube/live-sync.js";
import { type FakeKube, startFakeKube } from "../../fake-kube/server.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import type { RecordingBackend } from "./backends.js";

/** One "cluster": a fake API server and the real sync (informers → reconciler → Redis writer) watching it. */
export interface KubeCluster {
  readonly name: string;
  readonly kube: FakeKube;
  readonly sync: LiveSync;
  /** Stops the sync (its heartbeat with it) and the fake API server. Idempotent. */
  stop(): Promise<void>;
}

export async function startKubeCluster(options: {
  name: string;
  prefix: string;
  redisUrl: string;
  leaseMs?: number;
  logger?: Logger;
  /** More sync settings (e.g. GATEWAY_ADDRESSES). */
  env?: Readonly<Record<string, string>>;
}): Promise<KubeCluster> {
  const kube = await startFakeKube();
  const sync = await startLiveOn(
    kube,
    {
      CLUSTER_NAME: options.name,
      EDGESLICE_PREFIX: options.prefix,
      REDIS_URL: options.redisUrl,
      LEASE_MS: String(options.leaseMs ?? 60_000),
      DEBOUNCE_MS: "10",
      MAX_WAIT_MS: "100",
      // Scale-downs are the point of these tests: no safety-valve hold.
      VALVE_HOLD_MS: "0",
      POD_NAME: `sync-${options.name}`,
      ...options.env,
    },
    options.logger,
  );
  let stopped: Promise<void> | undefined;
  return {
    name: options.name,
    kube,
    sync,
    stop: () => {
      stopped ??= (async () => {
        await sync.stop();
        await kube.close();
      })();
      return stopped;
    },
  };
}

export function debugLogger(label: string): Logger {
  return createJsonLogger({ level: "debug", base: { label } });
}

/**
 * One slice per backend: every loopback backend has its own port, and a slice carries one port number for
 * all its endpoints (discovery.k8s.io/v1 EndpointSlice `ports`).
 */
export function sliceFor(
  namespace: string,
  service: string,
  backend: RecordingBackend,
  conditions: EndpointConditions = { ready: true, serving: true, terminating: false },
): ApplyInput {
  const name = `${service}-${backend.name}`;
  return sliceObject(namespace, name, service, [backend.ip], { port: backend.port, conditions });
}

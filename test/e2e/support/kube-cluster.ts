import { createJsonLogger, type Logger, silentLogger } from "../../../lib/logger.js";
import { parseSyncConfig } from "../../../sync/config.js";
import { type LiveSync, startLive } from "../../../sync/live.js";
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
}): Promise<KubeCluster> {
  const kube = await startFakeKube();
  const config = parseSyncConfig({
    CLUSTER_NAME: options.name,
    EDGESLICE_PREFIX: options.prefix,
    REDIS_URL: options.redisUrl,
    SYNC_PORT: "0",
    SYNC_HOST: "127.0.0.1",
    LEADER_ELECTION: "false",
    LEASE_MS: String(options.leaseMs ?? 60_000),
    DEBOUNCE_MS: "10",
    MAX_WAIT_MS: "100",
    // Scale-downs are the point of these tests: no safety-valve hold.
    VALVE_HOLD_MS: "0",
    POD_NAME: `sync-${options.name}`,
  });
  const sync = await startLive(config, {
    logger: options.logger ?? silentLogger,
    kubeConfig: kube.kubeConfig(),
  });
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

/** A Service exposed at `host` with one port named `http`. */
export function exposedService(namespace: string, name: string, host: string): ApplyInput {
  return {
    kind: "Service",
    metadata: { name, namespace, annotations: { "edgeslice.io/hosts": host } },
    spec: {
      type: "ClusterIP",
      ipFamilies: ["IPv4", "IPv6"],
      ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: "http" }],
    },
  };
}

export interface EndpointState {
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

/**
 * One slice per backend: every loopback backend has its own port, and a slice carries one port number for
 * all its endpoints (discovery.k8s.io/v1 EndpointSlice `ports`).
 */
export function sliceFor(
  namespace: string,
  service: string,
  backend: RecordingBackend,
  conditions: EndpointState = { ready: true, serving: true, terminating: false },
): ApplyInput {
  return {
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-${backend.name}`,
      namespace,
      labels: { "kubernetes.io/service-name": service },
    },
    addressType: backend.ip.includes(":") ? "IPv6" : "IPv4",
    ports: [{ name: "http", port: backend.port, protocol: "TCP" }],
    endpoints: [{ addresses: [backend.ip], conditions }],
  };
}

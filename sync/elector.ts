import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../lib/logger.js";
import { renewIntervalMs, retryIntervalMs, type SyncConfig } from "./config.js";
import type { KubeApi } from "./kube/kube-api.js";
import { createLeaderElection, type StepDownReason } from "./kube/leader.js";
import type { Reachability } from "./kube/reachability.js";

/** What live mode needs from leader election (kube/leader.ts provides it). */
export interface LeaderElector {
  start(): void | Promise<void>;
  /** Stops campaigning and releases the Lease if held. */
  stop(): Promise<void>;
  isLeader(): boolean;
  /** Try for the Lease now rather than at the next retry. */
  kick?(): void;
}

export type LeaderElectorFactory = (callbacks: {
  onStartedLeading: () => void;
  onStoppedLeading: (reason: StepDownReason) => void;
  onHeldByAnother?: () => void;
}) => LeaderElector;

/**
 * The Lease election with client-go's usual proportions: renew at a third of the lease, retry at a sixth,
 * so a live leader renews twice before a peer could consider its lease expired. config.ts checks that a
 * takeover this election makes after a crash fits within the store lease (LEASE_MS).
 */
export function leaseElector(
  config: SyncConfig,
  kubeConfig: KubeConfig,
  logger: Logger,
  shared: { api?: KubeApi; reachability?: Reachability } = {},
): LeaderElectorFactory {
  return (callbacks) =>
    createLeaderElection({
      kubeConfig,
      api: shared.api,
      reachability: shared.reachability,
      namespace: config.leaseNamespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationMs: config.leaderLeaseMs,
      renewIntervalMs: renewIntervalMs(config.leaderLeaseMs),
      retryIntervalMs: retryIntervalMs(config.leaderLeaseMs),
      logger,
      ...callbacks,
    });
}

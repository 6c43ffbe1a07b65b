import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../lib/logger.js";
import type { SyncConfig } from "./config.js";
import { createLeaderElection } from "./kube/leader.js";

/** What live mode needs from leader election (kube/leader.ts provides it). */
export interface LeaderElector {
  start(): void | Promise<void>;
  /** Stops campaigning and releases the Lease if held. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

export type LeaderElectorFactory = (callbacks: {
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}) => LeaderElector;

/**
 * The Lease election with client-go's usual proportions: renew at a third of the lease, retry at a sixth,
 * so a live leader renews twice before a peer could consider its lease expired.
 */
export function leaseElector(
  config: SyncConfig,
  kubeConfig: KubeConfig,
  logger: Logger,
): LeaderElectorFactory {
  return (callbacks) =>
    createLeaderElection({
      kubeConfig,
      namespace: config.leaseNamespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationMs: config.leaderLeaseMs,
      renewIntervalMs: Math.max(100, Math.floor(config.leaderLeaseMs / 3)),
      retryIntervalMs: Math.max(100, Math.floor(config.leaderLeaseMs / 6)),
      logger,
      ...callbacks,
    });
}

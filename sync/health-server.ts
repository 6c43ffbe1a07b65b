import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { listenOn } from "../lib/listen.js";
import { PROMETHEUS_CONTENT_TYPE } from "../lib/prometheus.js";
import type { SyncMetrics } from "./metrics.js";

/** What /readyz reports; ready only when every check passes. */
export interface Readiness {
  /** The informers finished their first full list. */
  readonly synced: boolean;
  /** The Redis connection is ready. */
  readonly redis: boolean;
  /**
   * A check when present: false while the leader re-pushes what the store lost (Redis restarted empty, keys
   * flushed): the store lacks what this sync holds until then.
   */
  readonly storeComplete?: boolean;
  /** Detail, not checks: this replica writes to the store. */
  readonly publishing?: boolean;
  /**
   * Detail: since when (RFC 3339) the API server has not answered. The sync stays ready meanwhile: it keeps
   * serving its last known state (fail static), and a restart would lose that state.
   */
  readonly apiserverUnreachableSince?: string;
  /** Detail: informers the API server has refused (401/403) past the report bound: an RBAC problem. */
  readonly refused?: readonly string[];
}

export interface HealthServerOptions {
  readonly port: number;
  readonly host: string;
  readonly metrics: SyncMetrics;
  /**
   * Leader and standby are both ready: a standby must pass its probe so a rollout can proceed and it
   * can take over; only the leader writes, which /metrics shows (`edgeslice_sync_leader`).
   */
  readonly readiness: () => Readiness;
}

export interface HealthServer {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/**
 * /livez (the process answers; `/healthz`, its name before, answers the same), /readyz (synced and Redis
 * reachable, with detail), /metrics (Prometheus): the router's probes have the same names.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") {
      response
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" })
        .end("method not allowed\n");
      return;
    }
    if (path === "/livez" || path === "/healthz") {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (path === "/readyz") {
      const checks = options.readiness();
      const ready = checks.synced && checks.redis && checks.storeComplete !== false;
      response
        .writeHead(ready ? 200 : 503, { "content-type": "application/json" })
        .end(`${JSON.stringify({ ready, ...checks })}\n`);
      return;
    }
    if (path === "/metrics") {
      response.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(options.metrics.render());
      return;
    }
    response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  // Probes are one-shot requests: keep-alive sockets would only delay close().
  server.keepAliveTimeout = 1_000;
  await listenOn(server, options, { port: "SYNC_PORT", host: "SYNC_HOST" });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("health server has no TCP address");
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

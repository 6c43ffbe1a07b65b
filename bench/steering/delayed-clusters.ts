import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import { clusterKeys } from "../../store/keys.js";
import type { ClusterPlace } from "../../store/places.js";
import { SCHEMA_VERSION } from "../../store/records.js";
import type { RouteRecord } from "../../store/routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../../store/services.js";
import type { ServiceSteering } from "../../store/steering.js";
import { putRoute, putServiceV2 } from "../../test/e2e/support/contract-layout.js";

/**
 * Clusters that exist only as names in Redis, each with one backend on 127.0.0.1 that waits a fixed time before
 * answering (a cluster farther away, or slower): what the steering bench and the Node end-to-end tests route
 * across. The backend answers `x-backend: <cluster>` so a client sees where it was sent, and can be made to
 * fail (answer 503) to play a cluster that breaks.
 */
export interface DelayedCluster {
  readonly name: string;
  readonly delayMs: number;
  readonly place: ClusterPlace;
  /** One per pod. */
  readonly ports: readonly number[];
  /** Answers 503 while true: the cluster fails. */
  failing: boolean;
  /** Requests that reached the backend. */
  hits: number;
  close(): Promise<void>;
}

export interface ClusterSpec {
  readonly name: string;
  readonly delayMs: number;
  readonly place: ClusterPlace;
  /** Backends (pods) of the cluster; 1 unless given. */
  readonly pods?: number;
}

export async function startDelayedCluster(spec: ClusterSpec): Promise<DelayedCluster> {
  const servers: Server[] = [];
  const ports: number[] = [];
  const cluster: DelayedCluster = {
    name: spec.name,
    delayMs: spec.delayMs,
    place: spec.place,
    ports,
    failing: false,
    hits: 0,
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
  for (let pod = 0; pod < (spec.pods ?? 1); pod++) {
    const server = createServer((request, response) => {
      cluster.hits++;
      request.resume();
      setTimeout(() => {
        response.writeHead(cluster.failing ? 503 : 200, {
          "x-backend": spec.name,
          "content-type": "text/plain",
        });
        response.end(cluster.failing ? "failing" : spec.name);
      }, spec.delayMs);
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    servers.push(server);
    ports.push((server.address() as AddressInfo).port);
  }
  return cluster;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** One Service of the test: its host and the steering annotation every cluster publishes for it. */
export interface SteeredService {
  readonly service: string;
  readonly host: string;
  readonly steering: ServiceSteering | undefined;
}

/**
 * Writes each cluster into the store as its sync would: a heartbeat record with its place and a lease, and per
 * Service a version 2 service record (the cluster's backend, the steering annotation) and an HTTPRoute for the
 * host. Every record points at 127.0.0.1 only.
 */
export async function publishClusters(
  redis: Redis,
  prefix: string,
  clusters: readonly DelayedCluster[],
  services: readonly SteeredService[],
  leaseMs = 600_000,
): Promise<void> {
  for (const cluster of clusters) {
    const keys = clusterKeys(prefix, cluster.name);
    const beat = {
      v: SCHEMA_VERSION,
      cluster: cluster.name,
      holder: "bench",
      at: Date.now(),
      leaseMs,
      ...cluster.place,
    };
    for (const { service, host, steering } of services) {
      const record: ServiceRecordV2 = {
        v: 2,
        cluster: cluster.name,
        service,
        ports: [
          {
            name: "http",
            number: 80,
            ipv4: {
              endpoints: cluster.ports.map((port) => ({ ip: "127.0.0.1", port })),
              fallback: false,
              draining: [],
            },
            ipv6: { endpoints: [], fallback: false, draining: [] },
          },
        ],
        ...(steering ? { steering } : {}),
      };
      // Checked the way routers check it: a record they would refuse fails here, not silently there.
      serializeServiceRecordV2(record);
      await putServiceV2(redis, prefix, record);
      await putRoute(redis, prefix, cluster.name, routeTo(service, host));
    }
    await redis
      .multi()
      .set(keys.heartbeat, JSON.stringify(beat))
      .set(keys.lease, "bench", "PX", leaseMs)
      .exec();
  }
}

function routeTo(service: string, host: string): RouteRecord {
  return {
    v: 2,
    id: `httproute:${service}`,
    source: "httproute",
    createdAt: 1_000,
    hostnames: [host],
    wildcard: "suffix",
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
        filters: {},
        backends: [{ service, port: 80, weight: 1 }],
      },
    ],
  };
}

/**
 * Frankfurt, Virginia and Oregon, their backends 5, 20 and 80 ms away: the three clusters, three pods
 * each (so a cluster that fails is found by its health, not by ejecting its one pod).
 */
export const THREE_CLUSTERS: readonly ClusterSpec[] = [
  { name: "fra", pods: 3, delayMs: 5, place: { region: "eu-central", location: { lat: 50.11, long: 8.68 } } },
  { name: "iad", pods: 3, delayMs: 20, place: { region: "us-east", location: { lat: 38.95, long: -77.45 } } },
  { name: "pdx", pods: 3, delayMs: 80, place: { region: "us-west", location: { lat: 45.84, long: -119.7 } } },
];

/** Where the router says it is: next to Frankfurt. */
export const ROUTER_NEAR_FRANKFURT = "50.0,8.5";

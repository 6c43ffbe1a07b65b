import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { type KubeCluster, startKubeCluster } from "../../e2e/support/kube-cluster.js";
import { sliceObject } from "../../fake-kube/fixtures.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import {
  type EchoBackend,
  type EchoClientInstance,
  echoClient,
  startEchoBackend,
  unary,
} from "../../support/grpc-echo.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { baseObjects, GATEWAY_API, INFRA } from "./conformance-base.js";

/**
 * The world of the official gRPC conformance tests (GRPCRoute, HTTPRouteBackendProtocolH2C): the base
 * manifests on a fake API server, the live sync publishing to Redis, one Node router, and instead of the
 * suite's echo pods loopback servers that name themselves in every answer: grpc-js echo servers behind the
 * Services grpc-infra-backend-v1..v3 (port 8080), and an HTTP/2 cleartext echo behind infra-backend-v1's
 * port 8081 (appProtocol kubernetes.io/h2c).
 */
export const GRPC_BACKENDS = ["grpc-infra-backend-v1", "grpc-infra-backend-v2", "grpc-infra-backend-v3"];

export interface GrpcConformance {
  readonly cluster: KubeCluster;
  readonly router: NodeRouter;
  /** A gRPC client of the router calling with `authority` as :authority. */
  client(authority: string): EchoClientInstance;
  /** Calls `method` until `done` holds for the outcome (the sync published, the router reloaded). */
  until(
    authority: string,
    method: "Echo" | "EchoTwo" | "EchoThree",
    done: (outcome: Awaited<ReturnType<typeof unary>>) => boolean,
    metadata?: Record<string, string>,
  ): Promise<Awaited<ReturnType<typeof unary>>>;
  stop(): Promise<void>;
}

function service(name: string, port: number, target: number, appProtocol?: string): ApplyInput[] {
  return [
    {
      kind: "Service",
      metadata: { name, namespace: INFRA },
      spec: {
        type: "ClusterIP",
        ports: [
          { name: "http", port, protocol: "TCP", targetPort: 3000, ...(appProtocol ? { appProtocol } : {}) },
        ],
      },
    },
    sliceObject(INFRA, `${name}-1`, name, ["127.0.0.1"], { port: target }),
  ];
}

/** A loopback HTTP/2 cleartext server answering `<namespace>/<name> HTTP/<version>` (RFC 9113 §3.3). */
async function startH2cEcho(name: string): Promise<{ server: Http2Server; port: number }> {
  const server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(`${INFRA}/${name} HTTP/${request.httpVersion}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

export async function startGrpcConformance(options: {
  readonly label: string;
  readonly objects: readonly ApplyInput[];
}): Promise<GrpcConformance> {
  const prefix = uniquePrefix(`conf-${options.label}`);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const backends: EchoBackend[] = [];
  const clients: EchoClientInstance[] = [];
  let h2c: Http2Server | undefined;
  let cluster: KubeCluster | undefined;
  let router: NodeRouter | undefined;
  const stop = async () => {
    for (const client of clients) client.close();
    await router?.close();
    await cluster?.stop();
    await Promise.all(backends.map((backend) => backend.close()));
    await new Promise<void>((resolve) => (h2c ? h2c.close(() => resolve()) : resolve()));
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  };
  try {
    for (const name of GRPC_BACKENDS) backends.push(await startEchoBackend(`${INFRA}/${name}`));
    const h2cEcho = await startH2cEcho("infra-backend-v1");
    h2c = h2cEcho.server;
    cluster = await startKubeCluster({
      name: "east",
      prefix,
      redisUrl: REDIS_URL,
      env: { GATEWAY_ADDRESSES: "127.0.0.1", LOG_LEVEL: "error" },
    });
    const objects = [
      ...baseObjects(),
      ...GRPC_BACKENDS.flatMap((name, index) => service(name, 8080, backends[index]?.port ?? 0)),
      ...service("infra-backend-v1", 8081, h2cEcho.port, "kubernetes.io/h2c"),
      ...options.objects,
    ];
    for (const object of objects) cluster.kube.apply(object);
    const config = parseRouterConfig({
      REDIS_URL,
      PORT: "0",
      EDGESLICE_PREFIX: prefix,
      LOG_LEVEL: "error",
    });
    router = await startNodeRouter(config, {
      host: "127.0.0.1",
      logger: silentLogger,
      refreshIntervalMs: 100,
      drainMs: 200,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const started = router;
  const client = (authority: string) => {
    const made = echoClient(started.port, authority);
    clients.push(made);
    return made;
  };
  const byAuthority = new Map<string, EchoClientInstance>();
  return {
    cluster: cluster as KubeCluster,
    router: started,
    client,
    async until(authority, method, done, metadata = {}) {
      let caller = byAuthority.get(authority);
      if (!caller) {
        caller = client(authority);
        byAuthority.set(authority, caller);
      }
      const deadline = Date.now() + 10_000;
      for (;;) {
        const outcome = await unary(caller, method, "", {}, metadata);
        if (done(outcome) || Date.now() > deadline) return outcome;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    stop,
  };
}

/** A GRPCRoute of the infra namespace. */
export function grpcRouteObject(name: string, spec: Record<string, unknown>): ApplyInput {
  return {
    apiVersion: GATEWAY_API,
    kind: "GRPCRoute",
    metadata: { name, namespace: INFRA, generation: 1 },
    spec,
  };
}

/** Which backend answered a call, as the suite's ExpectedResponse names it, or its gRPC status code. */
export function answeredBy(outcome: Awaited<ReturnType<typeof unary>>): string | number {
  return outcome.ok ? (outcome.text.split(" ")[0] ?? "") : outcome.code;
}

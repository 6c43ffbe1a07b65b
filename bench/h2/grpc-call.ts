import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROUTE_SCHEMA_VERSION } from "../../store/routes.js";
import { SERVICE_SCHEMA_VERSION } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";

/** The :authority the gRPC bench's calls carry, routed to the gRPC backend. */
export const GRPC_HOST = "grpc.bench.example.test";
export const GRPC_PATH = "/bench.Echo/Call";

/** gRPC's length-prefixed message (not compressed, 4-byte length) around `payload`. */
export function grpcMessage(payload: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}

export const GRPC_REQUEST = grpcMessage(Buffer.alloc(32, 1));
export const GRPC_ANSWER = grpcMessage(Buffer.alloc(32, 2));

/** The request body h2load posts (`-d`), in a temporary file. */
export async function grpcRequestFile(): Promise<string> {
  const file = join(tmpdir(), `edgeslice-grpc-request-${process.pid}.bin`);
  await writeFile(file, GRPC_REQUEST);
  return file;
}

/** A GRPCRoute's records: GRPC_HOST to a Service whose one port is h2c, the gRPC backend on 127.0.0.1. */
export async function publishGrpcRoute(writer: ClusterWriter, backendPort: number): Promise<void> {
  const empty = { endpoints: [], fallback: false, draining: [] };
  await writer.putService({
    v: SERVICE_SCHEMA_VERSION,
    cluster: writer.cluster,
    service: "bench/grpc",
    ports: [
      {
        name: "grpc",
        number: 80,
        protocol: "h2c",
        ipv4: { endpoints: [{ ip: "127.0.0.1", port: backendPort }], fallback: false, draining: [] },
        ipv6: empty,
      },
    ],
  });
  await writer.putRoute({
    v: ROUTE_SCHEMA_VERSION,
    id: "grpcroute:bench/grpc",
    source: "grpcroute",
    createdAt: 0,
    hostnames: [GRPC_HOST],
    wildcard: "suffix",
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
        filters: {},
        backends: [{ service: "bench/grpc", port: 80, weight: 1 }],
      },
    ],
  });
  await writer.heartbeat({ holder: "bench", leaseMs: 24 * 3600 * 1000, at: Date.now() });
}

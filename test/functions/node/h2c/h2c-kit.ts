import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import type { MemoryStore } from "../../../../store/memory-store.js";
import { ROUTE_SCHEMA_VERSION } from "../../../../store/routes.js";
import { SERVICE_SCHEMA_VERSION } from "../../../../store/services.js";

/** A loopback HTTP/2 cleartext server (prior knowledge) that counts its sessions. */
export interface H2cBackend {
  readonly port: number;
  readonly server: Http2Server;
  /** Sessions accepted so far. */
  readonly sessions: Http2Session[];
  close(): Promise<void>;
}

export async function startH2cBackend(
  onStream: (stream: ServerHttp2Stream, headers: Record<string, string | string[] | undefined>) => void,
  settings: { maxConcurrentStreams?: number } = {},
): Promise<H2cBackend> {
  const server = createServer({ settings });
  const sessions: Http2Session[] = [];
  server.on("session", (session) => sessions.push(session));
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    onStream(stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    server,
    sessions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Publishes Service default/app, port 80 of `protocol` on 127.0.0.1:`port`, routed for app.example by an
 * HTTPRoute-shaped record (or a GRPCRoute's, whose backends are h2c whatever the port says).
 */
export async function publishH2c(
  store: MemoryStore,
  ports: readonly number[],
  options: { protocol?: "h2c"; source?: "httproute" | "grpcroute"; hostnames?: string[] } = {},
): Promise<void> {
  const writer = store.writer("a");
  const family = {
    endpoints: ports.map((port) => ({ ip: "127.0.0.1", port })),
    fallback: false,
    draining: [],
  };
  await writer.putService({
    v: SERVICE_SCHEMA_VERSION,
    cluster: "a",
    service: "default/app",
    ports: [
      {
        name: "grpc",
        number: 80,
        ...(options.protocol ? { protocol: options.protocol } : {}),
        ipv4: family,
        ipv6: { endpoints: [], fallback: false, draining: [] },
      },
    ],
  });
  const source = options.source ?? "httproute";
  await writer.putRoute({
    v: ROUTE_SCHEMA_VERSION,
    id: `${source}:default/app`,
    source,
    createdAt: 0,
    hostnames: options.hostnames ?? ["app.example"],
    wildcard: "suffix",
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
        filters: {},
        backends: [{ service: "default/app", port: 80, weight: 1 }],
      },
    ],
  });
  await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
}

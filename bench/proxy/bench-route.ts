import { SCHEMA_VERSION } from "../../store/records.js";
import type { ClusterWriter } from "../../store/store.js";
import { BENCH_HOST } from "./payloads.js";

/** Publishes the bench's one route (BENCH_HOST to the backend on 127.0.0.1) through `writer`, fresh for a day. */
export async function publishBenchRoute(writer: ClusterWriter, backendPort: number): Promise<void> {
  await writer.put({
    v: SCHEMA_VERSION,
    cluster: writer.cluster,
    service: "bench/backend",
    hosts: [BENCH_HOST],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: [{ ip: "127.0.0.1", port: backendPort }], fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  });
  await writer.heartbeat({ holder: "bench", leaseMs: 24 * 3600 * 1000, at: Date.now() });
}

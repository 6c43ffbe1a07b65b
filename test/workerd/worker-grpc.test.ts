import { describe, expect, it } from "vitest";
import {
  endpoint,
  heartbeat,
  putRoute,
  putServiceV2,
  routeRecord,
  routeRule,
  serviceRecordV2,
} from "../e2e/support/contract-layout.js";
import { REDIS_URL } from "../support/redis.js";
import { CLUSTER, get, namedBackend, workerFixture } from "./worker-fixture.js";

/**
 * gRPC calls in real workerd: the Worker reaches backends with fetch(), which does not speak HTTP/2 with prior
 * knowledge, so a call whose backends are h2c (a Service port with appProtocol kubernetes.io/h2c, or a
 * GRPCRoute's) is answered with a gRPC error, never sent to them as HTTP/1.1; the Worker's own answers to gRPC
 * calls are gRPC errors too (docs/workers.md, "gRPC and h2c upstreams").
 */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd-grpc");
const GRPC = { method: "POST", headers: { "content-type": "application/grpc" }, body: "" };

async function workerTo(port: { ip: string; port: number } | undefined, source: "httproute" | "grpcroute") {
  const prefix = freshPrefix();
  await heartbeat(redis(), prefix, CLUSTER, 120_000);
  const record = serviceRecordV2({
    cluster: CLUSTER,
    service: "shop/grpc",
    ports: [{ number: 80, ipv4: port ? [endpoint(port.ip, port.port)] : [] }],
  });
  const [first] = record.ports;
  const ports = first ? [{ ...first, protocol: "h2c" as const }] : [];
  await putServiceV2(redis(), prefix, { ...record, ports });
  const rule = routeRule([{ service: "shop/grpc", port: 80, weight: 1 }]);
  await putRoute(
    redis(),
    prefix,
    CLUSTER,
    routeRecord(`${source}:shop/grpc`, { hostnames: ["grpc.test"], rules: [rule] }),
  );
  return worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
}

describe("gRPC on Workers", () => {
  it.each(["httproute", "grpcroute"] as const)(
    "answers a call to h2c backends of a %s UNAVAILABLE (14) and sends them nothing",
    async (source) => {
      let reached = 0;
      const b = await backend("127.0.0.1", (request, response) => {
        reached++;
        namedBackend("h2c")(request, response);
      });
      const mf = await workerTo(b, source);
      const reply = await get(mf, "http://grpc.test/pkg.Svc/Do", GRPC);
      expect([reply.status, reply.headers.get("grpc-status"), reply.body]).toEqual([200, "14", ""]);
      expect(reached).toBe(0);
    },
  );

  it("answers a call to a Service without endpoints UNAVAILABLE (14)", async () => {
    const mf = await workerTo(undefined, "grpcroute");
    const reply = await get(mf, "http://grpc.test/pkg.Svc/Do", GRPC);
    expect([reply.status, reply.headers.get("grpc-status")]).toEqual([200, "14"]);
    expect(reply.headers.get("grpc-message")).toBe("edgeslice: no_endpoints");
  });

  it("answers a call no route matches UNIMPLEMENTED (12)", async () => {
    const mf = await workerTo(undefined, "grpcroute");
    const reply = await get(mf, "http://elsewhere.test/pkg.Svc/Do", GRPC);
    expect([reply.status, reply.headers.get("grpc-status"), reply.headers.get("content-type")]).toEqual([
      200,
      "12",
      "application/grpc",
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unary } from "../support/grpc-echo.js";
import { INFRA } from "./support/conformance-base.js";
import {
  answeredBy,
  type GrpcConformance,
  grpcRouteObject,
  startGrpcConformance,
} from "./support/grpc-conformance.js";
import { untilGrpcRouteAccepted } from "./support/grpc-route-status.js";

/**
 * Conformance GRPCRouteWeight: gRPC backends weighted 70, 30 and 0. As the suite does for weights, 500 calls
 * (10 at a time) must split within 5 points of 70 % and 30 %, the weight-0 backend answering none; a draw is
 * random, so a round may be repeated (up to 10 rounds; one misses with a chance near 1.4 %).
 */
let world: GrpcConformance;
const EXPECTED = { "grpc-infra-backend-v1": 0.7, "grpc-infra-backend-v2": 0.3, "grpc-infra-backend-v3": 0 };
const TOTAL = 500;
const TOLERANCE = 0.05;

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-weight",
    objects: [
      grpcRouteObject("weighted-backends", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            backendRefs: [
              { name: "grpc-infra-backend-v1", port: 8080, weight: 70 },
              { name: "grpc-infra-backend-v2", port: 8080, weight: 30 },
              { name: "grpc-infra-backend-v3", port: 8080, weight: 0 },
            ],
          },
        ],
      }),
    ],
  });
  await world.until("example.com", "Echo", (outcome) => outcome.ok);
}, 30_000);

afterAll(() => world?.stop());

async function distribution(): Promise<Map<string | number, number>> {
  const client = world.client("example.com");
  const seen = new Map<string | number, number>();
  let sent = 0;
  const worker = async () => {
    while (sent < TOTAL) {
      sent += 1;
      const by = answeredBy(await unary(client, "Echo", ""));
      seen.set(by, (seen.get(by) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  return seen;
}

function misses(seen: ReadonlyMap<string | number, number>): string[] {
  return Object.entries(EXPECTED).flatMap(([service, share]) => {
    const got = (seen.get(`${INFRA}/${service}`) ?? 0) / TOTAL;
    return Math.abs(got - share) > TOLERANCE ? [`${service} got ${got}, wants ${share}`] : [];
  });
}

describe("GRPCRouteWeight", () => {
  it("accepts the route with its references resolved", async () => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, "weighted-backends");
    expect(lines[0]).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it("splits 500 calls 70/30 within 5 points, none to the weight-0 backend", async () => {
    let seen = await distribution();
    for (let round = 1; round < 10 && misses(seen).length > 0; round++) seen = await distribution();
    expect(misses(seen)).toEqual([]);
    expect(seen.get(`${INFRA}/grpc-infra-backend-v3`) ?? 0).toBe(0);
    expect([...seen.keys()].every((key) => typeof key === "string")).toBe(true);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INFRA } from "./support/conformance-base.js";
import {
  answeredBy,
  type GrpcConformance,
  grpcRouteObject,
  startGrpcConformance,
} from "./support/grpc-conformance.js";
import { untilGrpcRouteAccepted } from "./support/grpc-route-status.js";

/**
 * Conformance GRPCExactMethodMatching: one GRPCRoute sends Echo to one backend and EchoTwo to another; a method
 * no rule matches is UNIMPLEMENTED. Through the fake API server, the live sync and the Node router, with a real
 * gRPC client.
 */
let world: GrpcConformance;
const SERVICE = "edgeslice.test.Echo";

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-exact-method",
    objects: [
      grpcRouteObject("exact-matching", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [{ method: { service: SERVICE, method: "Echo" } }],
            backendRefs: [{ name: "grpc-infra-backend-v1", port: 8080 }],
          },
          {
            matches: [{ method: { service: SERVICE, method: "EchoTwo" } }],
            backendRefs: [{ name: "grpc-infra-backend-v2", port: 8080 }],
          },
        ],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("GRPCExactMethodMatching", () => {
  it("accepts the route on the Gateway with its references resolved", async () => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, "exact-matching");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it.each([
    ["Echo", `${INFRA}/grpc-infra-backend-v1`],
    ["EchoTwo", `${INFRA}/grpc-infra-backend-v2`],
    ["EchoThree", 12],
  ] as const)("routes %s to %s", async (method, expected) => {
    const outcome = await world.until("example.com", method, (found) => answeredBy(found) === expected);
    expect(answeredBy(outcome)).toBe(expected);
  });
});

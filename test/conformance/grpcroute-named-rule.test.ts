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
 * Conformance GRPCRouteNamedRule: a GRPCRoute rule with a `name` routes as an unnamed one does; Echo goes to the
 * named rule's backend, EchoTwo to the unnamed rule's.
 */
let world: GrpcConformance;
const SERVICE = "edgeslice.test.Echo";

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-named-rule",
    objects: [
      grpcRouteObject("grpc-named-rules", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            name: "named-rule",
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

describe("GRPCRouteNamedRule", () => {
  it("accepts the route with a named rule, its references resolved", async () => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, "grpc-named-rules");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it.each([
    ["Echo", `${INFRA}/grpc-infra-backend-v1`],
    ["EchoTwo", `${INFRA}/grpc-infra-backend-v2`],
  ] as const)("routes %s to %s", async (method, expected) => {
    const outcome = await world.until("example.com", method, (found) => answeredBy(found) === expected);
    expect(answeredBy(outcome)).toBe(expected);
  });
});

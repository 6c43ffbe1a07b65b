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
 * Conformance GRPCRouteHeaderMatching: rules told apart by request metadata (header matches of type Exact, names
 * compared without case). The rule with more header matches wins; between rules with as many, the first in
 * the route. Calls no rule matches are UNIMPLEMENTED.
 */
let world: GrpcConformance;
const V1 = `${INFRA}/grpc-infra-backend-v1`;
const V2 = `${INFRA}/grpc-infra-backend-v2`;
const to = (name: string) => [{ name, port: 8080 }];
const header = (name: string, value: string) => ({ name, value });

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-header-matching",
    objects: [
      grpcRouteObject("grpc-header-matching", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          { matches: [{ headers: [header("version", "one")] }], backendRefs: to("grpc-infra-backend-v1") },
          { matches: [{ headers: [header("version", "two")] }], backendRefs: to("grpc-infra-backend-v2") },
          {
            matches: [{ headers: [header("version", "two"), header("color", "orange")] }],
            backendRefs: to("grpc-infra-backend-v1"),
          },
          {
            matches: [{ headers: [header("color", "blue")] }, { headers: [header("color", "green")] }],
            backendRefs: to("grpc-infra-backend-v1"),
          },
          {
            matches: [{ headers: [header("color", "red")] }, { headers: [header("color", "yellow")] }],
            backendRefs: to("grpc-infra-backend-v2"),
          },
        ],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("GRPCRouteHeaderMatching", () => {
  it("accepts the route with its references resolved", async () => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, "grpc-header-matching");
    expect(lines[0]).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it.each<[Record<string, string>, string | number]>([
    [{ Version: "one" }, V1],
    [{ Version: "two" }, V2],
    [{ Version: "two", Color: "orange" }, V1],
    [{ Version: "two", Color: "blue" }, V2],
    [{ Color: "orange" }, 12],
    [{ "Some-Other-Header": "one" }, 12],
    [{ Color: "blue" }, V1],
    [{ Color: "green" }, V1],
    [{ Color: "red" }, V2],
    [{ Color: "yellow" }, V2],
    [{ Color: "purple" }, 12],
  ])("routes a call with metadata %j to %s", async (metadata, expected) => {
    const outcome = await world.until(
      "example.com",
      "Echo",
      (found) => answeredBy(found) === expected,
      metadata,
    );
    expect(answeredBy(outcome)).toBe(expected);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_API, httpListener, INFRA } from "./support/conformance-base.js";
import {
  answeredBy,
  type GrpcConformance,
  grpcRouteObject,
  startGrpcConformance,
} from "./support/grpc-conformance.js";
import { untilGrpcRouteAccepted } from "./support/grpc-route-status.js";

/**
 * Conformance GRPCRouteListenerHostnameMatching: four listeners on one port with different hostnames, a
 * GRPCRoute attached to each by sectionName; the call's :authority picks the listener, the most specific
 * hostname first. An authority no listener takes is UNIMPLEMENTED.
 */
let world: GrpcConformance;
const GATEWAY = "grpcroute-listener-hostname-matching";
const onListener = (name: string, ...sections: string[]) =>
  grpcRouteObject(name, {
    parentRefs: sections.map((sectionName) => ({ name: GATEWAY, namespace: INFRA, sectionName })),
    rules: [{ backendRefs: [{ name: `grpc-infra-${name}`, port: 8080 }] }],
  });
const sameNamespace = (hostname: string) => ({ allowedRoutes: { namespaces: { from: "Same" } }, hostname });

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-listener-hostname",
    objects: [
      {
        apiVersion: GATEWAY_API,
        kind: "Gateway",
        metadata: { name: GATEWAY, namespace: INFRA, generation: 1 },
        spec: {
          gatewayClassName: "edgeslice",
          listeners: [
            httpListener("listener-1", 80, sameNamespace("bar.com")),
            httpListener("listener-2", 80, sameNamespace("foo.bar.com")),
            httpListener("listener-3", 80, sameNamespace("*.bar.com")),
            httpListener("listener-4", 80, sameNamespace("*.foo.com")),
          ],
        },
      },
      onListener("backend-v1", "listener-1"),
      onListener("backend-v2", "listener-2"),
      onListener("backend-v3", "listener-3", "listener-4"),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("GRPCRouteListenerHostnameMatching", () => {
  it.each(["backend-v1", "backend-v2", "backend-v3"])("accepts route %s on its listeners", async (name) => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, name);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it.each<[string, string | number]>([
    ["bar.com", `${INFRA}/grpc-infra-backend-v1`],
    ["foo.bar.com", `${INFRA}/grpc-infra-backend-v2`],
    ["baz.bar.com", `${INFRA}/grpc-infra-backend-v3`],
    ["boo.bar.com", `${INFRA}/grpc-infra-backend-v3`],
    ["multiple.prefixes.bar.com", `${INFRA}/grpc-infra-backend-v3`],
    ["multiple.prefixes.foo.com", `${INFRA}/grpc-infra-backend-v3`],
    ["foo.com", 12],
    ["no.matching.host", 12],
  ])("routes a call to :authority %s to %s", async (authority, expected) => {
    const outcome = await world.until(authority, "Echo", (found) => answeredBy(found) === expected);
    expect(answeredBy(outcome)).toBe(expected);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unary } from "../support/grpc-echo.js";
import { INFRA } from "./support/conformance-base.js";
import { type GrpcConformance, grpcRouteObject, startGrpcConformance } from "./support/grpc-conformance.js";
import { untilGrpcRouteAccepted } from "./support/grpc-route-status.js";

/**
 * Conformance GRPCRouteRequestHeaderModifier: a GRPCRoute's RequestHeaderModifier sets, adds and removes request
 * metadata before the call reaches its backend (which answers with the `x-header-*` metadata it received).
 */
let world: GrpcConformance;
const SERVICE = "edgeslice.test.Echo";
const modifier = (requestHeaderModifier: Record<string, unknown>) => [
  { type: "RequestHeaderModifier", requestHeaderModifier },
];

beforeAll(async () => {
  world = await startGrpcConformance({
    label: "grpc-header-modifier",
    objects: [
      grpcRouteObject("grpc-request-header-modifier", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          {
            matches: [{ method: { service: SERVICE, method: "Echo" } }],
            filters: modifier({
              set: [{ name: "X-Header-Set", value: "set-overwrites-values" }],
              add: [{ name: "X-Header-Add", value: "add-appends-values" }],
              remove: ["X-Header-Remove"],
            }),
            backendRefs: [{ name: "grpc-infra-backend-v1", port: 8080 }],
          },
          {
            matches: [{ method: { service: SERVICE, method: "EchoTwo" } }],
            filters: modifier({
              set: [
                { name: "X-Header-Set-1", value: "header-set-1" },
                { name: "X-Header-Set-2", value: "header-set-2" },
              ],
              add: [
                { name: "X-Header-Add-1", value: "header-add-1" },
                { name: "X-Header-Add-2", value: "header-add-2" },
              ],
              remove: ["X-Header-Remove-1", "X-Header-Remove-2"],
            }),
            backendRefs: [{ name: "grpc-infra-backend-v2", port: 8080 }],
          },
        ],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

/** What the backend saw of a call to `method` sent with `metadata`. */
async function seen(method: "Echo" | "EchoTwo", metadata: Record<string, string>): Promise<string> {
  await world.until("example.com", method, (outcome) => outcome.ok);
  const outcome = await unary(world.client("example.com"), method, "headers", {}, metadata);
  return outcome.ok ? outcome.text : `status ${outcome.code}`;
}

describe("GRPCRouteRequestHeaderModifier", () => {
  it("accepts the route with its references resolved", async () => {
    const lines = await untilGrpcRouteAccepted(world.cluster.kube, "grpc-request-header-modifier");
    expect(lines[0]).toMatch(/Accepted=True\/Accepted ResolvedRefs=True\/ResolvedRefs/);
  });

  it("sets, adds to and removes a call's metadata", async () => {
    const text = await seen("Echo", {
      "X-Header-Set": "some-other-value",
      "X-Header-Add": "some",
      "X-Header-Remove": "val",
      "X-Header-Kept": "kept",
    });
    expect(text.startsWith(`${INFRA}/grpc-infra-backend-v1 `)).toBe(true);
    expect(JSON.parse(text.slice(text.indexOf(" ") + 1))).toEqual({
      "x-header-add": "some, add-appends-values",
      "x-header-kept": "kept",
      "x-header-set": "set-overwrites-values",
    });
  });

  it("applies several of each in one filter", async () => {
    const text = await seen("EchoTwo", {
      "X-Header-Set-1": "original",
      "X-Header-Add-1": "original",
      "X-Header-Remove-1": "gone",
      "X-Header-Remove-2": "gone",
    });
    expect(text.startsWith(`${INFRA}/grpc-infra-backend-v2 two `)).toBe(true);
    expect(JSON.parse(text.slice(text.indexOf("{")))).toEqual({
      "x-header-add-1": "original, header-add-1",
      "x-header-add-2": "header-add-2",
      "x-header-set-1": "header-set-1",
      "x-header-set-2": "header-set-2",
    });
  });
});

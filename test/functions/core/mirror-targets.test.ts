import { describe, expect, it } from "vitest";
import { mirrorTargets } from "../../../functions/core/routes/mirrors.js";
import type { ServedRoute } from "../../../functions/core/snapshot/served-routes.js";

const served = {
  route: { source: "httproute" },
  clusters: [
    {
      servicesV2: new Map([
        [
          "infra/mirror",
          {
            ports: [
              {
                number: 8080,
                ipv4: { endpoints: [{ ip: "127.0.0.1", port: 18080 }] },
                ipv6: { endpoints: [{ ip: "::1", port: 18081 }] },
              },
              {
                number: 9090,
                protocol: "h2c",
                ipv4: { endpoints: [{ ip: "127.0.0.1", port: 19090 }] },
                ipv6: { endpoints: [] },
              },
            ],
          },
        ],
      ]),
    },
  ],
} as unknown as ServedRoute;
const fixed = (value: number) => () => value;

describe("where a request's copies go", () => {
  it.each([
    ["every request at 100 percent", 100, 0.99, ["127.0.0.1:18080"]],
    ["a draw under the percent", 30, 0.29, ["127.0.0.1:18080"]],
    ["no copy for a draw at or above it", 30, 0.3, []],
    ["no copy at 0 percent", 0, 0, []],
  ])("sends %s", (_case, percent, draw, expected) => {
    const targets = mirrorTargets(served, [{ service: "infra/mirror", port: 8080, percent }], fixed(draw));
    expect(targets.map((item) => `${item.ip}:${item.port}`)).toEqual(expected.slice(0, 1));
  });

  it("skips a mirror whose Service port has no endpoints, keeping the others", () => {
    const targets = mirrorTargets(
      served,
      [
        { service: "infra/missing", port: 8080, percent: 100 },
        { service: "infra/mirror", port: 8080, percent: 100 },
      ],
      fixed(0),
    );
    expect(targets.map((item) => item.service)).toEqual(["infra/mirror"]);
  });

  it("makes no copy for a rule without mirrors", () => {
    expect(mirrorTargets(served, undefined, fixed(0))).toEqual([]);
  });

  it("makes no copy for an h2c port, nor for a GRPCRoute's mirrors: copies go over HTTP/1.1", () => {
    expect(mirrorTargets(served, [{ service: "infra/mirror", port: 9090, percent: 100 }], fixed(0))).toEqual(
      [],
    );
    const grpc = { ...served, route: { source: "grpcroute" } } as unknown as ServedRoute;
    expect(mirrorTargets(grpc, [{ service: "infra/mirror", port: 8080, percent: 100 }], fixed(0))).toEqual(
      [],
    );
  });
});

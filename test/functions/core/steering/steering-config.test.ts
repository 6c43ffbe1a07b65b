import { describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../../functions/core/settings/config.js";
import { parseSyncConfig } from "../../../../sync/config.js";

describe("steering settings of the router", () => {
  it("defaults to local-first and no location", () => {
    expect(parseRouterConfig({})).toMatchObject({
      clusterSteering: "local-first",
      routerLocation: undefined,
    });
  });

  it("reads CLUSTER_STEERING and ROUTER_LOCATION", () => {
    expect(parseRouterConfig({ CLUSTER_STEERING: "latency", ROUTER_LOCATION: "50.11, 8.68" })).toMatchObject({
      clusterSteering: "latency",
      routerLocation: { lat: 50.11, long: 8.68 },
    });
  });

  it("names both bad values in one error", () => {
    expect(() => parseRouterConfig({ CLUSTER_STEERING: "nearest", ROUTER_LOCATION: "frankfurt" })).toThrow(
      /CLUSTER_STEERING must be one of local-first, proximity, latency, weighted.*ROUTER_LOCATION must be lat,long/,
    );
  });
});

describe("where the sync says its cluster is", () => {
  it("publishes no place unless told", () => {
    expect(parseSyncConfig({ CLUSTER_NAME: "east" }, () => "pod").place).toEqual({
      region: undefined,
      location: undefined,
    });
  });

  it("reads CLUSTER_REGION and CLUSTER_LOCATION", () => {
    const config = parseSyncConfig(
      { CLUSTER_NAME: "east", CLUSTER_REGION: "eu-central-1", CLUSTER_LOCATION: "50.11,8.68" },
      () => "pod",
    );
    expect(config.place).toEqual({ region: "eu-central-1", location: { lat: 50.11, long: 8.68 } });
  });

  it.each([
    ["CLUSTER_LOCATION", "91,0", /CLUSTER_LOCATION must be lat,long/],
    ["CLUSTER_REGION", "eu central", /CLUSTER_REGION: region must be/],
  ])("refuses a bad %s", (name, value, message) => {
    expect(() => parseSyncConfig({ CLUSTER_NAME: "east", [name]: value }, () => "pod")).toThrow(message);
  });
});

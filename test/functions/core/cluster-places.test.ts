import { describe, expect, it } from "vitest";
import { createRouting } from "../../../functions/core/routing.js";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { parseClusterPlaces, placesOf } from "../../../functions/core/trust/cluster-places.js";
import { silentLogger } from "../../../lib/logger.js";
import { testConfig } from "../harness.js";
import {
  clusterOrder,
  heartbeatsOf,
  PLACES,
  steered,
  steeredSnapshot,
} from "./steering/steering-fixtures.js";

const placesFrom = (text: string) => {
  const parsed = parseClusterPlaces(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

describe("CLUSTER_PLACES", () => {
  it("reads each cluster's location and region, either or both", () => {
    const places = placesFrom("east=location:50.11,8.68 region:eu-central-1; west=region:us-east-1;");
    expect(places.get("east")).toEqual({ location: { lat: 50.11, long: 8.68 }, region: "eu-central-1" });
    expect(places.get("west")).toEqual({ location: undefined, region: "us-east-1" });
  });

  it.each([
    ["east", /not cluster=location/],
    ["East=region:x", /not a cluster name/],
    ["east=", /needs location/],
    ["east=location:91,0", /latitude/],
    ["east=region:-x", /not a region name/],
    ["east=zone:a", /neither location/],
    ["east=region:a region:b", /once each/],
    ["east=region:a; east=region:b", /listed twice/],
    [";", /lists no cluster/],
  ])("refuses %j", (text, error) => {
    const parsed = parseClusterPlaces(text);
    expect(parsed.ok ? "" : parsed.error).toMatch(error);
  });

  it("is read by the router's config, and a malformed value fails the start naming the variable", () => {
    expect(parseRouterConfig({ CLUSTER_PLACES: "east=region:eu" }).clusterPlaces?.get("east")).toEqual({
      location: undefined,
      region: "eu",
    });
    expect(() => parseRouterConfig({ CLUSTER_PLACES: "east=somewhere" })).toThrow(/CLUSTER_PLACES/);
  });

  it("takes a listed cluster's whole place from the setting, never from its heartbeat, and leaves the rest", () => {
    const beats = heartbeatsOf({
      east: { region: "lied", location: { lat: 1, long: 1 } },
      west: PLACES.iad ?? {},
    });
    const merged = placesOf(beats, placesFrom("east=region:eu-central-1"));
    expect(merged?.get("east")).toEqual({ location: undefined, region: "eu-central-1" });
    expect(merged?.get("west")).toMatchObject(PLACES.iad ?? {});
    expect(placesOf(beats, placesFrom("east=region:eu-central-1"))).not.toBe(beats);
    expect(placesOf(beats, undefined)).toBe(beats);
  });
});

describe("proximity steering against a cluster that lies about where it runs (issue 35 item 9)", () => {
  const FRANKFURT_ROUTER = { lat: 50.0, long: 8.5 };
  // pdx's heartbeat claims to be in Frankfurt, nearer the router than fra itself.
  const lying = heartbeatsOf({
    ...PLACES,
    pdx: { region: "eu-central", location: { lat: 50.0, long: 8.51 } },
  });
  const routingWith = (clusterPlaces?: string) =>
    createRouting({
      source: {
        current: () =>
          steeredSnapshot({
            fra: { policy: "proximity" },
            iad: { policy: "proximity" },
            pdx: { policy: "proximity" },
          }),
        heartbeats: () => lying,
      },
      config: {
        ...testConfig,
        routerLocation: FRANKFURT_ROUTER,
        ...(clusterPlaces ? { clusterPlaces: placesFrom(clusterPlaces) } : {}),
      },
      now: () => 1_000_000,
      random: () => 0.5,
      balancing: "p2c",
      logger: silentLogger,
    });

  it("attracts the traffic by its heartbeat alone (the attack)", async () => {
    expect(clusterOrder(await steered(routingWith())).at(0)).toBe("pdx");
  });

  it("is steered by the place the router's configuration pins for it", async () => {
    expect(clusterOrder(await steered(routingWith("pdx=location:45.84,-119.7 region:us-west")))).toEqual([
      "fra",
      "iad",
      "pdx",
    ]);
  });
});

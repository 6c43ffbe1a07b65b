import { describe, expect, it } from "vitest";
import { parseGeoPoint } from "../../store/places.js";
import { decodeHeartbeatRecord, SCHEMA_VERSION } from "../../store/records.js";
import { heartbeatOf } from "../../store/redis/heartbeats.js";

describe("where clusters are (store/places.ts)", () => {
  it.each<[string, string, { lat: number; long: number } | string]>([
    ["reads lat,long in decimal degrees", "50.11,8.68", { lat: 50.11, long: 8.68 }],
    ["allows spaces, signs and the extremes", " -90 , +180 ", { lat: -90, long: 180 }],
    ["allows whole degrees and a leading point", "0,.5", { lat: 0, long: 0.5 }],
    ["refuses a latitude past 90", "90.5,8", "latitude -90 to 90"],
    ["refuses a longitude past 180", "50,-181", "longitude -180 to 180"],
    ["refuses one number", "50.11", "is not lat,long"],
    ["refuses three numbers", "1,2,3", "is not lat,long"],
    ["refuses words, exponents and empty parts", "north,8", "is not lat,long"],
    ["refuses an exponent", "5e1,8", "is not lat,long"],
    ["refuses an empty part", ",8", "is not lat,long"],
  ])("%s", (_name, text, expected) => {
    const parsed = parseGeoPoint(text);
    if (typeof expected === "string") {
      expect(parsed.ok).toBe(false);
      expect(parsed.ok ? "" : parsed.error).toContain(expected);
    } else expect(parsed).toEqual({ ok: true, value: expected });
  });
});

describe("heartbeat records with and without a place", () => {
  const beat = { v: SCHEMA_VERSION, cluster: "east", holder: "sync-0", at: 1, leaseMs: 15_000 };

  it("reads a sync's region and location", () => {
    const decoded = decodeHeartbeatRecord(
      JSON.stringify({ ...beat, region: "eu-central-1", location: { lat: 50.11, long: 8.68 } }),
    );
    expect(decoded.ok && heartbeatOf(decoded.value)).toMatchObject({
      holder: "sync-0",
      region: "eu-central-1",
      location: { lat: 50.11, long: 8.68 },
    });
  });

  it("reads the record of a sync that predates places as placed nowhere", () => {
    const decoded = decodeHeartbeatRecord(JSON.stringify(beat));
    expect(decoded.ok).toBe(true);
    expect(decoded.ok && heartbeatOf(decoded.value).location).toBeUndefined();
  });

  it("reads a record with fields newer than this router knows, dropping them (as routers before places drop these)", () => {
    const decoded = decodeHeartbeatRecord(
      JSON.stringify({ ...beat, region: "eu", capacity: 7, tier: "gold" }),
    );
    expect(decoded.ok && decoded.value).toEqual({ ...beat, region: "eu" });
  });

  it.each([
    ["a location off the globe", { location: { lat: 91, long: 0 } }],
    ["a location as text", { location: "50.11,8.68" }],
    ["a region with a space", { region: "eu central" }],
  ])("refuses a record with %s", (_name, extra) => {
    expect(decodeHeartbeatRecord(JSON.stringify({ ...beat, ...extra })).ok).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { EARTH_RADIUS_KM, greatCircleKm } from "../../../../functions/core/steering/geo.js";
import type { GeoPoint } from "../../../../store/places.js";

const HALF_CIRCUMFERENCE = Math.PI * EARTH_RADIUS_KM;

/** The spherical law of cosines: another formula for the same sphere, to hold the haversine to. */
function lawOfCosinesKm(a: GeoPoint, b: GeoPoint): number {
  const r = Math.PI / 180;
  const cosine =
    Math.sin(a.lat * r) * Math.sin(b.lat * r) +
    Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.cos((b.long - a.long) * r);
  return EARTH_RADIUS_KM * Math.acos(Math.max(-1, Math.min(1, cosine)));
}

const frankfurt = { lat: 50.11, long: 8.68 };
const oregon = { lat: 45.84, long: -119.7 };
const virginia = { lat: 38.95, long: -77.45 };
const london = { lat: 51.51, long: -0.13 };
const sydney = { lat: -33.87, long: 151.21 };

describe("great-circle distance", () => {
  it.each<[string, GeoPoint, GeoPoint, number]>([
    ["is zero from a point to itself", frankfurt, frankfurt, 0],
    [
      "is a quarter circumference along the equator from 0° to 90° east",
      { lat: 0, long: 0 },
      { lat: 0, long: 90 },
      HALF_CIRCUMFERENCE / 2,
    ],
    [
      "is half the circumference between antipodes",
      { lat: 0, long: 0 },
      { lat: 0, long: 180 },
      HALF_CIRCUMFERENCE,
    ],
    [
      "is half the circumference from pole to pole",
      { lat: 90, long: 0 },
      { lat: -90, long: 0 },
      HALF_CIRCUMFERENCE,
    ],
    [
      "is the same across the antimeridian as around it",
      { lat: 10, long: 179 },
      { lat: 10, long: -179 },
      lawOfCosinesKm({ lat: 10, long: 179 }, { lat: 10, long: -179 }),
    ],
    [
      "matches the law of cosines from Frankfurt to Oregon",
      frankfurt,
      oregon,
      lawOfCosinesKm(frankfurt, oregon),
    ],
    ["matches the law of cosines from London to Sydney", london, sydney, lawOfCosinesKm(london, sydney)],
  ])("%s", (_name, a, b, km) => {
    expect(greatCircleKm(a, b)).toBeCloseTo(km, 3);
    expect(greatCircleKm(b, a)).toBeCloseTo(km, 3);
  });

  it("orders clusters as a map does: from Frankfurt, London, then Virginia, then Oregon", () => {
    const ranked = [oregon, virginia, london].sort(
      (a, b) => greatCircleKm(frankfurt, a) - greatCircleKm(frankfurt, b),
    );
    expect(ranked).toEqual([london, virginia, oregon]);
  });

  it("stays exact for points a few metres apart, where the law of cosines rounds to nothing useful", () => {
    // 0.0001° of latitude is π R / 1,800,000 km, about 11.1 m.
    expect(greatCircleKm({ lat: 50, long: 8 }, { lat: 50.0001, long: 8 })).toBeCloseTo(
      HALF_CIRCUMFERENCE / 1_800_000,
      9,
    );
  });
});

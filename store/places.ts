import * as v from "valibot";
import type { Result } from "../lib/result.js";

/**
 * Where a cluster runs, as its sync says in its heartbeat record (CLUSTER_REGION, CLUSTER_LOCATION), and where a
 * router or a client is (ROUTER_LOCATION, a Worker's `request.cf`): what proximity steering measures distances
 * between. Shared by both sides, so a location the sync accepts is one every router reads.
 */

/** A point on the Earth in decimal degrees (WGS 84, as Cloudflare's `request.cf` gives it). */
export const GeoPointSchema = v.object({
  lat: v.pipe(v.number(), v.finite(), v.minValue(-90), v.maxValue(90)),
  long: v.pipe(v.number(), v.finite(), v.minValue(-180), v.maxValue(180)),
});
export type GeoPoint = v.InferOutput<typeof GeoPointSchema>;

/** A free-form region name (`eu-central-1`, `fra`): shown, never matched against anything. */
export const RegionSchema = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
    "region must be 1-63 of A-Z a-z 0-9 . _ - (not starting with . _ -)",
  ),
);

/** What a heartbeat record says of its cluster's place; either part may be missing (an older sync: both). */
export interface ClusterPlace {
  readonly region?: string | undefined;
  readonly location?: GeoPoint | undefined;
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** `lat,long` in decimal degrees (`50.11,8.68`), the form of CLUSTER_LOCATION and ROUTER_LOCATION. */
export function parseGeoPoint(text: string): Result<GeoPoint> {
  const parts = text.split(",").map((part) => part.trim());
  const [lat, long] = parts;
  if (
    parts.length !== 2 ||
    lat === undefined ||
    long === undefined ||
    !DECIMAL.test(lat) ||
    !DECIMAL.test(long)
  ) {
    return { ok: false, error: `"${text.slice(0, 64)}" is not lat,long in decimal degrees` };
  }
  const point = v.safeParse(GeoPointSchema, { lat: Number(lat), long: Number(long) });
  if (!point.success) {
    return { ok: false, error: `"${text.slice(0, 64)}": latitude -90 to 90, longitude -180 to 180` };
  }
  return { ok: true, value: point.output };
}

/** The heartbeat record's fields for `place`: only the parts that are set. */
export function placeFields(place: ClusterPlace | undefined): ClusterPlace {
  return {
    ...(place?.region === undefined ? {} : { region: place.region }),
    ...(place?.location === undefined
      ? {}
      : { location: { lat: place.location.lat, long: place.location.long } }),
  };
}

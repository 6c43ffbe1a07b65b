import type { GeoPoint } from "../../../store/places.js";

/** The mean Earth radius (IUGG, R1 = 6371.0088 km): the sphere the great-circle distance is measured on. */
export const EARTH_RADIUS_KM = 6371.0088;

const RADIANS = Math.PI / 180;

/**
 * The great-circle distance between two points, in km, by the haversine formula (R. W. Sinnott, "Virtues of
 * the Haversine", Sky and Telescope 68(2), 1984): hav(d/R) = hav(Δφ) + cos φ1 · cos φ2 · hav(Δλ), which stays
 * exact for the short distances the law of cosines loses to rounding. A sphere, not the WGS 84 ellipsoid: off
 * by at most about 0.5 %, which never reorders clusters that are meaningfully apart.
 */
export function greatCircleKm(a: GeoPoint, b: GeoPoint): number {
  const dLat = (b.lat - a.lat) * RADIANS;
  const dLong = (b.long - a.long) * RADIANS;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.lat * RADIANS) * Math.cos(b.lat * RADIANS) * Math.sin(dLong / 2) ** 2;
  // min(1, h): rounding may push h a hair above 1 for antipodal points, where asin would give NaN.
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.sqrt(Math.min(1, h)));
}

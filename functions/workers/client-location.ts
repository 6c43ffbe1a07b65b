import * as v from "valibot";
import { GeoPointSchema } from "../../store/places.js";
import type { ClientLocation } from "../core/steering/origin.js";

/**
 * The client's place from Cloudflare's `request.cf` (IncomingRequestCfProperties): `latitude` and `longitude`
 * are decimal strings, `continent` two letters, `colo` the IATA code of the data centre. Checked like any other
 * input: a field that does not read as documented is left out, and a request without `cf` (a test, a local
 * dev server) has no place, so proximity measures from ROUTER_LOCATION.
 */
const CfSchema = v.object({
  latitude: v.optional(v.unknown()),
  longitude: v.optional(v.unknown()),
  continent: v.optional(v.unknown()),
  colo: v.optional(v.unknown()),
});

const DEGREES = /^[+-]?\d{1,3}(?:\.\d+)?$/;

export function clientLocationOf(cf: unknown): ClientLocation | undefined {
  const parsed = v.safeParse(CfSchema, cf);
  if (!parsed.success) return undefined;
  const { latitude, longitude, continent, colo } = parsed.output;
  const point =
    typeof latitude === "string" &&
    typeof longitude === "string" &&
    DEGREES.test(latitude) &&
    DEGREES.test(longitude)
      ? v.safeParse(GeoPointSchema, { lat: Number(latitude), long: Number(longitude) })
      : undefined;
  const location: ClientLocation = {
    ...(point?.success ? { point: point.output } : {}),
    ...(typeof continent === "string" && /^[A-Z]{2}$/.test(continent) ? { continent } : {}),
    ...(typeof colo === "string" && /^[A-Z]{3}$/.test(colo) ? { colo } : {}),
  };
  return location.point || location.continent || location.colo ? location : undefined;
}

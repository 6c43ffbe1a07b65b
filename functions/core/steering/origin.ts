import type { GeoPoint } from "../../../store/places.js";

/**
 * Where a request comes from, as the runtime knows it: on Workers, Cloudflare's `request.cf` (the client's
 * estimated coordinates, its continent, the data centre that took the request); on Node, nothing (the router's
 * own ROUTER_LOCATION stands in).
 */
export interface ClientLocation {
  readonly point?: GeoPoint | undefined;
  /** Two letters: AF, AN, AS, EU, NA, OC, SA. */
  readonly continent?: string | undefined;
  /** The IATA code of the Cloudflare data centre; shown, not measured. */
  readonly colo?: string | undefined;
}

/** The point distances are measured from, and which of the places it is. */
export interface SteeringOrigin {
  readonly point: GeoPoint;
  readonly from: "client" | "client-continent" | "router";
}

/**
 * A rough middle of each continent, for a client whose coordinates Cloudflare could not estimate: coarse, but
 * it still tells Frankfurt from Oregon.
 */
const CONTINENT_POINTS: Readonly<Record<string, GeoPoint>> = {
  AF: { lat: 2, long: 17 },
  AN: { lat: -80, long: 0 },
  AS: { lat: 34, long: 100 },
  EU: { lat: 50, long: 15 },
  NA: { lat: 45, long: -100 },
  OC: { lat: -25, long: 140 },
  SA: { lat: -15, long: -60 },
};

/** The client's coordinates, else its continent's middle, else the router's location; undefined: none known. */
export function steeringOrigin(
  client: ClientLocation | undefined,
  router: GeoPoint | undefined,
): SteeringOrigin | undefined {
  if (client?.point) return { point: client.point, from: "client" };
  const continent = client?.continent === undefined ? undefined : CONTINENT_POINTS[client.continent];
  if (continent) return { point: continent, from: "client-continent" };
  return router ? { point: router, from: "router" } : undefined;
}

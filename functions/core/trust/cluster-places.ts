import * as v from "valibot";
import type { Result } from "../../../lib/result.js";
import { ClusterNameSchema } from "../../../store/names.js";
import { type ClusterPlace, parseGeoPoint, RegionSchema } from "../../../store/places.js";

/**
 * CLUSTER_PLACES: where each cluster runs, as the router's own setting. A cluster's heartbeat says where it runs
 * (CLUSTER_LOCATION, CLUSTER_REGION of its sync), but that is the cluster's own claim: one granted a shared
 * host could attract proximity traffic by lying about it. A cluster listed here takes its place from here
 * alone, whatever its heartbeat says (a part left out is unknown, never the heartbeat's); a cluster not
 * listed keeps its heartbeat's.
 *
 * @example
 * east=location:50.11,8.68 region:eu-central-1; west=location:40.71,-74.01 region:us-east-1
 */
export type ClusterPlaces = ReadonlyMap<string, ClusterPlace>;

/** Parses CLUSTER_PLACES; every problem is listed at once. */
export function parseClusterPlaces(text: string): Result<ClusterPlaces> {
  const places = new Map<string, ClusterPlace>();
  const problems: string[] = [];
  for (const raw of text.split(";")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const parsed = parsePlace(entry);
    if (!parsed.ok) problems.push(parsed.error);
    else if (places.has(parsed.value.cluster))
      problems.push(`cluster ${parsed.value.cluster} is listed twice`);
    else places.set(parsed.value.cluster, parsed.value.place);
  }
  if (problems.length === 0 && places.size === 0) problems.push("lists no cluster (leave it unset for none)");
  return problems.length > 0 ? { ok: false, error: problems.join("; ") } : { ok: true, value: places };
}

function parsePlace(entry: string): Result<{ cluster: string; place: ClusterPlace }> {
  const equals = entry.indexOf("=");
  const cluster = equals < 0 ? "" : entry.slice(0, equals).trim();
  if (equals < 0) return { ok: false, error: `"${entry}" is not cluster=location:lat,long region:name` };
  if (!v.is(ClusterNameSchema, cluster)) {
    return { ok: false, error: `"${cluster}" is not a cluster name (a DNS-1123 label)` };
  }
  let location: ClusterPlace["location"];
  let region: string | undefined;
  const fields = entry
    .slice(equals + 1)
    .split(/\s+/)
    .filter((field) => field !== "");
  for (const field of fields) {
    const colon = field.indexOf(":");
    const name = field.slice(0, Math.max(colon, 0));
    const value = field.slice(colon + 1);
    if (name === "location" && location === undefined) {
      const point = parseGeoPoint(value);
      if (!point.ok) return { ok: false, error: `${cluster}: location: ${point.error}` };
      location = point.value;
    } else if (name === "region" && region === undefined) {
      if (!v.is(RegionSchema, value))
        return { ok: false, error: `${cluster}: "${value}" is not a region name` };
      region = value;
    } else
      return {
        ok: false,
        error: `${cluster}: "${field}" is neither location:lat,long nor region:name (once each)`,
      };
  }
  if (location === undefined && region === undefined) {
    return { ok: false, error: `${cluster}: needs location:lat,long, region:name or both` };
  }
  return { ok: true, value: { cluster, place: { location, region } } };
}

const pinned = new WeakMap<
  ReadonlyMap<string, ClusterPlace>,
  WeakMap<ClusterPlaces, Map<string, ClusterPlace>>
>();

/**
 * Each cluster's place as steering and explain use it: the heartbeats' (`beats`, replaced on each refresh), with
 * every cluster CLUSTER_PLACES lists taking its place from there instead. Memoised per pair of maps.
 */
export function placesOf(
  beats: ReadonlyMap<string, ClusterPlace> | undefined,
  places: ClusterPlaces | undefined,
): ReadonlyMap<string, ClusterPlace> | undefined {
  if (!places) return beats;
  const base = beats ?? EMPTY;
  let byPlaces = pinned.get(base);
  if (!byPlaces) {
    byPlaces = new WeakMap();
    pinned.set(base, byPlaces);
  }
  let merged = byPlaces.get(places);
  if (!merged) {
    merged = new Map(base);
    for (const [cluster, place] of places) merged.set(cluster, place);
    byPlaces.set(places, merged);
  }
  return merged;
}

const EMPTY: ReadonlyMap<string, ClusterPlace> = new Map();

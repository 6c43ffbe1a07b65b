import type { Redis } from "ioredis";
import { clusterKeys } from "../../../store/keys.js";
import type { RouteRecord, RouteRule } from "../../../store/routes.js";
import { PREFIX } from "./hostile-world.js";

/**
 * Records a hostile cluster publishes with its own sync credential: valid route records of a chosen size (many
 * rules, as a real route could hold), written the way its sync would (the record, then a change entry).
 */

/** A valid route record for `host` whose serialized form is `bytes` long, give or take one rule. */
export function routeOfSize(id: string, host: string, bytes: number, service = "evil/web"): RouteRecord {
  const rule = (index: number): RouteRule => ({
    matches: [
      {
        path: { type: "Exact", value: `/p/${index}/${"x".repeat(48)}` },
        headers: [{ name: "x-tenant", value: `${index}-${"v".repeat(48)}` }],
      },
    ],
    filters: {},
    backends: [{ service, port: 80, weight: 1 }],
  });
  const ruleBytes = JSON.stringify(rule(100_000)).length + 1;
  const count = Math.max(1, Math.floor((bytes - 200) / ruleBytes));
  return {
    v: 2,
    id,
    source: "httproute",
    createdAt: 1_000,
    hostnames: [host],
    wildcard: "suffix",
    rules: Array.from({ length: count }, (_, index) => rule(index)),
  };
}

/** Writes a route record (any string) into the cluster's hash and announces it on its change stream. */
export async function publishRoute(
  sync: Redis,
  cluster: string,
  route: RouteRecord | { id: string; raw: string },
): Promise<void> {
  const keys = clusterKeys(PREFIX, cluster);
  const raw = "raw" in route ? route.raw : JSON.stringify(route);
  await sync.hset(keys.routes, route.id, raw);
  await announce(sync, cluster, route.id);
}

/** One change entry naming the route `id` (no write of the record itself): what a churn attack appends. */
export async function announce(sync: Redis, cluster: string, id: string): Promise<void> {
  await sync.xadd(
    clusterKeys(PREFIX, cluster).changes,
    "*",
    "v",
    "2",
    "kind",
    "route",
    "id",
    id,
    "op",
    "put",
  );
}

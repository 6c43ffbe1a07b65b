import type { Cluster, Redis } from "ioredis";
import type { WarnOnce } from "../../lib/warn-once.js";
import type { ClusterState } from "../cluster-state.js";
import { clusterKeys } from "../keys.js";
import {
  type BudgetReport,
  HeldRecords,
  NOT_GRANTED,
  type RecordBudget,
  routeCost,
} from "../record-budget.js";
import type { RouteRecord } from "../routes.js";
import {
  type ClusterRecords,
  clusterView,
  type DecodedService,
  decodeClusterRecords,
  decodeStoredRoute,
  decodeStoredService,
  NO_RECORDS,
  updatedRecords,
} from "../stored-records.js";
import {
  hashSizesOf,
  LISTING_FACTOR,
  type RawRecords,
  type ReadBytes,
  readHashesWithin,
  readNamedWithin,
  sizeCommands,
  UNCHANGED,
} from "./budgeted-reads.js";
import { pipelineValues } from "./replies.js";
import { lastEntryId, STREAM_START_ID } from "./streams.js";

/** One cluster as the Node router's reader knows it: with the sizes of what it holds, within its budget. */
export type BudgetedCluster = ClusterState & { readonly held: HeldRecords };

/**
 * One cluster read whole within its budget (budgeted-reads.ts): stream position, sizes, lease and heartbeat in
 * one round trip, then the records that fit, decoded. A cluster that is not `granted` is sized and left
 * unread: its records are never transferred nor decoded, only counted for the report.
 */
export async function loadClusterWithin(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  options: { readonly budget: RecordBudget; readonly granted: boolean; readonly warnings: WarnOnce },
): Promise<BudgetedCluster> {
  const keys = clusterKeys(prefix, cluster);
  const pipeline = redis.pipeline().xrevrange(keys.changes, "+", "-", "COUNT", 1);
  sizeCommands(pipeline, keys).exists(keys.lease).exists(keys.heartbeat);
  const [lastEntries, ...rest] = pipelineValues(await pipeline.exec(), 7);
  const sizes = hashSizesOf(rest.slice(0, 4));
  const [lease, heartbeat] = rest.slice(4);
  const held = new HeldRecords(options.budget);
  let raws: RawRecords | undefined;
  let unread: string | undefined = NOT_GRANTED;
  if (options.granted) {
    raws = await readHashesWithin(redis, keys, sizes, held);
    unread = raws
      ? undefined
      : `its records take ${megabytes(sizes.memory)} MB in Redis, over ${LISTING_FACTOR} x CLUSTER_MAX_BYTES`;
  }
  const decoded = raws
    ? decodeClusterRecords(cluster, raws.services, raws.routes, options.warnings)
    : NO_RECORDS;
  if (raws) releaseUndecoded(held, raws, decoded);
  const records = raws ? withinRouteCosts(held, raws, decoded) : decoded;
  const budget: BudgetReport =
    unread === undefined
      ? held.report()
      : { bytes: 0, records: 0, refused: [], refusedCount: sizes.records, unread };
  return {
    view: { ...clusterView(cluster, lease !== 1, records), budget },
    records,
    lastChangeId: lastEntryId(lastEntries) ?? STREAM_START_ID,
    registered: heartbeat === 1,
    held,
  };
}

/**
 * The services and routes a change batch names, re-read within the cluster's budget: `records` with those
 * that changed decoded again (undefined: nothing changed, so no new snapshot is needed). A record named again
 * unchanged (the same digest) is not decoded again; one refused or gone leaves the records.
 */
export async function readChangesWithin(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  held: HeldRecords,
  named: { readonly services: readonly string[]; readonly routes: readonly string[] },
  base: { readonly records: ClusterRecords; readonly warnings: WarnOnce; readonly read?: ReadBytes },
): Promise<ClusterRecords | undefined> {
  const keys = clusterKeys(prefix, cluster);
  const [serviceRaws, routeRaws] = await Promise.all([
    readNamedWithin(redis, keys.services, "service", named.services, held, base.read),
    readNamedWithin(redis, keys.routes, "route", named.routes, held, base.read),
  ]);
  const context = { cluster, held, warnings: base.warnings };
  const services = new Map<string, DecodedService | undefined>();
  for (const [id, raw] of serviceRaws) {
    if (raw === UNCHANGED) continue;
    const decoded = raw === undefined ? undefined : decodedService(context, id, raw);
    if (decoded !== undefined || base.records.servicesV2.has(id) || base.records.services.has(id))
      services.set(id, decoded);
  }
  const routes = new Map<string, RouteRecord | undefined>();
  for (const [id, raw] of routeRaws) {
    if (raw === UNCHANGED) continue;
    const decoded = raw === undefined ? undefined : decodedRoute(context, id, raw);
    if (decoded !== undefined || base.records.routes.has(id)) routes.set(id, decoded);
  }
  if (services.size === 0 && routes.size === 0) return undefined;
  return updatedRecords(base.records, services, routes);
}

interface DecodeContext {
  readonly cluster: string;
  readonly held: HeldRecords;
  readonly warnings: WarnOnce;
}

/** A changed service record decoded, held at its cost (a version 1 record's route counts); undefined: left out. */
function decodedService(context: DecodeContext, id: string, raw: string): DecodedService | undefined {
  const { cluster, held, warnings } = context;
  const decoded = decodeStoredService(cluster, id, raw, warnings);
  if (decoded === undefined) {
    held.remove("service", id);
    return undefined;
  }
  const legacy = decoded.v1?.route;
  return legacy && held.resize("service", id, routeCost(raw.length, legacy)) ? undefined : decoded;
}

/** A changed route record decoded, held at its route-table cost; undefined: left out. */
function decodedRoute(context: DecodeContext, id: string, raw: string): RouteRecord | undefined {
  const { cluster, held, warnings } = context;
  const decoded = decodeStoredRoute(cluster, id, raw, warnings);
  if (decoded === undefined) {
    held.remove("route", id);
    return undefined;
  }
  return held.resize("route", id, routeCost(raw.length, decoded)) ? undefined : decoded;
}

/**
 * The records with each route (and each version 1 record's annotation route) held at its route-table cost
 * (record-budget.ts routeCost), in id order: those that no longer fit are left out.
 */
function withinRouteCosts(held: HeldRecords, raws: RawRecords, records: ClusterRecords): ClusterRecords {
  const services = new Map<string, DecodedService | undefined>();
  const routes = new Map<string, RouteRecord | undefined>();
  for (const [id, raw] of raws.services) {
    const legacy = records.legacyRoutes.get(id);
    if (legacy && held.resize("service", id, routeCost(raw.length, legacy))) services.set(id, undefined);
  }
  for (const [id, raw] of raws.routes) {
    const route = records.routes.get(id);
    if (route && held.resize("route", id, routeCost(raw.length, route))) routes.set(id, undefined);
  }
  return services.size === 0 && routes.size === 0 ? records : updatedRecords(records, services, routes);
}

/** Records read but not served (invalid, or a version 1 sync's route values) are not held either. */
function releaseUndecoded(held: HeldRecords, raws: RawRecords, records: ClusterRecords): void {
  for (const id of raws.services.keys()) if (!records.servicesV2.has(id)) held.remove("service", id);
  for (const id of raws.routes.keys()) if (!records.routes.has(id)) held.remove("route", id);
}

function megabytes(bytes: number): string {
  return (bytes / 1_000_000).toFixed(1);
}

/** Whether two reports say the same (a change batch that altered neither records nor report needs no snapshot). */
export function sameReport(a: BudgetReport | undefined, b: BudgetReport | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.bytes === b.bytes &&
    a.records === b.records &&
    a.refusedCount === b.refusedCount &&
    a.unread === b.unread &&
    a.throttled === b.throttled &&
    a.refused.length === b.refused.length &&
    a.refused.every((refused, index) => refused.id === b.refused[index]?.id)
  );
}

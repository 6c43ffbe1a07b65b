import type { Cluster, Redis } from "ioredis";
import { byCodeUnits } from "../../lib/code-unit-order.js";
import { type HeldRecords, type RecordKind, recordDigest } from "../record-budget.js";
import { hashEntries, pipelineValues } from "./replies.js";

/**
 * Reads of one cluster's service and route hashes that never take more of the router's memory than the
 * cluster's budget (store/record-budget.ts) allows: sizes are asked of Redis first (HLEN, MEMORY USAGE, HSTRLEN),
 * and only what fits is read. Redis offers no read of part of a value, so a record is either read whole or
 * not at all; a record that grows between the size and the read is dropped once read.
 */

/** The two hashes of one cluster. */
export interface HashKeys {
  readonly services: string;
  readonly routes: string;
}

/** What Redis says of both hashes before they are read (HLEN and MEMORY USAGE ... SAMPLES 0). */
export interface HashSizes {
  readonly records: number;
  /** Redis' own count of the bytes both hashes take, names and values (at least their serialized length). */
  readonly memory: number;
}

/** Admitted records as stored, by id, services and routes apart. */
export interface RawRecords {
  readonly services: Map<string, string>;
  readonly routes: Map<string, string>;
}

/**
 * Past this many times the byte budget, a cluster's hashes are not even listed (HKEYS would bring every
 * name, and names may be as long as values): none of its records is read, and the report says why.
 */
export const LISTING_FACTOR = 4;
/** Ids are at most 512 characters (routes.ts, names.ts); a longer field name is no record of ours. */
const MAX_FIELD_NAME = 1_024;
/** Fields per HSTRLEN pipeline and per HMGET, and bytes per HMGET at most. */
const FIELDS_PER_READ = 1_000;
const BYTES_PER_READ = 8 * 1024 * 1024;

/** The commands that size both hashes, for the pipeline that reads the cluster's position and lease. */
export function sizeCommands(
  pipeline: ReturnType<Redis["pipeline"]>,
  keys: HashKeys,
): ReturnType<Redis["pipeline"]> {
  return pipeline
    .hlen(keys.services)
    .hlen(keys.routes)
    .call("MEMORY", "USAGE", keys.services, "SAMPLES", "0")
    .call("MEMORY", "USAGE", keys.routes, "SAMPLES", "0");
}

/** The replies of sizeCommands, in their order. */
export function hashSizesOf(replies: readonly unknown[]): HashSizes {
  const number = (value: unknown) => (typeof value === "number" ? value : 0);
  const [servicesCount, routesCount, servicesMemory, routesMemory] = replies;
  return {
    records: number(servicesCount) + number(routesCount),
    memory: number(servicesMemory) + number(routesMemory),
  };
}

/**
 * Both hashes of one cluster read within `held`'s budget (an empty HeldRecords, filled here): whole when Redis'
 * own size of them fits (HGETALL), else by name (HKEYS, HSTRLEN, then HMGET of what fits: services first,
 * then routes, each by id), or, past LISTING_FACTOR times the budget, not at all (undefined).
 */
export async function readHashesWithin(
  redis: Redis | Cluster,
  keys: HashKeys,
  sizes: HashSizes,
  held: HeldRecords,
): Promise<RawRecords | undefined> {
  const { maxBytes, maxRecords } = held.budget;
  if (sizes.memory <= maxBytes && sizes.records <= maxRecords) {
    const [services, routes] = pipelineValues(
      await redis.pipeline().hgetall(keys.services).hgetall(keys.routes).exec(),
      2,
    );
    return {
      services: admitted(held, "service", hashEntries(services)),
      routes: admitted(held, "route", hashEntries(routes)),
    };
  }
  if (sizes.memory > LISTING_FACTOR * maxBytes) return undefined;
  const [serviceNames, routeNames] = pipelineValues(
    await redis.pipeline().hkeys(keys.services).hkeys(keys.routes).exec(),
    2,
  ) as [string[], string[]];
  const services = await readNamedWithin(
    redis,
    keys.services,
    "service",
    serviceNames.sort(byCodeUnits),
    held,
  );
  const routes = await readNamedWithin(redis, keys.routes, "route", routeNames.sort(byCodeUnits), held);
  return { services: definedOnly(services), routes: definedOnly(routes) };
}

/** Counts the bytes of records read (change-rate.ts spendBytes). */
export interface ReadBytes {
  bytes: number;
}

/** The value a changed record reads as when it is the one already held (same digest): nothing to decode. */
export const UNCHANGED = Symbol("unchanged");

/**
 * Some fields of one hash (those a change batch names), each read only if it fits the budget in place of the
 * version held: the raw record, UNCHANGED when it is the very one held, or undefined when it is gone or
 * refused (then nothing is held under its id). The bytes read are added to `read`, when given.
 */
export async function readNamedWithin(
  redis: Redis | Cluster,
  key: string,
  kind: RecordKind,
  fields: readonly string[],
  held: HeldRecords,
  read?: ReadBytes,
): Promise<Map<string, string | typeof UNCHANGED | undefined>> {
  const out = new Map<string, string | typeof UNCHANGED | undefined>();
  const listed = fields.filter((field) => {
    if (field.length <= MAX_FIELD_NAME) return true;
    held.admit(kind, field.slice(0, 64), Number.POSITIVE_INFINITY);
    return false;
  });
  const lengths: number[] = [];
  for (let start = 0; start < listed.length; start += FIELDS_PER_READ) {
    const pipeline = redis.pipeline();
    for (const field of listed.slice(start, start + FIELDS_PER_READ)) pipeline.hstrlen(key, field);
    const chunk = listed.slice(start, start + FIELDS_PER_READ);
    for (const value of pipelineValues(await pipeline.exec(), chunk.length)) lengths.push(Number(value));
  }
  const toRead: { field: string; digest: string | undefined; length: number }[] = [];
  listed.forEach((field, index) => {
    const length = lengths[index] ?? 0;
    const digest = held.digestOf(kind, field);
    if (length === 0) {
      held.remove(kind, field);
      out.set(field, undefined);
    } else if (held.admit(kind, field, length)) out.set(field, undefined);
    else toRead.push({ field, digest, length });
  });
  for (const batch of readBatches(toRead, (item) => item.length, BYTES_PER_READ)) {
    const raws = await redis.hmget(key, ...batch.map((item) => item.field));
    batch.forEach(({ field, digest }, index) => {
      const raw = raws[index];
      if (read && typeof raw === "string") read.bytes += raw.length;
      if (typeof raw !== "string" || raw === "") {
        held.remove(kind, field);
        out.set(field, undefined);
        return;
      }
      // It may have changed since its length was read: held to the budget again.
      if (held.admit(kind, field, raw.length)) {
        out.set(field, undefined);
        return;
      }
      const now = recordDigest(raw);
      held.read(kind, field, now);
      out.set(field, now === digest ? UNCHANGED : raw);
    });
  }
  return out;
}

/** Entries held within the budget, in id order; their digests noted. */
function admitted(
  held: HeldRecords,
  kind: RecordKind,
  entries: readonly [string, string][],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, raw] of [...entries].sort((a, b) => byCodeUnits(a[0], b[0]))) {
    if (held.admit(kind, id, raw.length)) continue;
    held.read(kind, id, recordDigest(raw));
    out.set(id, raw);
  }
  return out;
}

/** `items` cut into reads of at most FIELDS_PER_READ fields and about `limit` bytes (each item's `size`). */
function readBatches<T>(items: readonly T[], size: (item: T) => number, limit: number): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (batch.length > 0 && (batch.length >= FIELDS_PER_READ || bytes + size(item) > limit)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size(item);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function definedOnly(
  values: ReadonlyMap<string, string | typeof UNCHANGED | undefined>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, value] of values) if (typeof value === "string") out.set(id, value);
  return out;
}

import type { Cluster, Redis } from "ioredis";
import { flatPairs } from "./replies.js";

/**
 * Change-stream ids and the reading of a stream's state: whether a reader resuming after its last id could
 * miss entries (trimmed, deleted, reset or gone), from XINFO STREAM.
 */

/** The change stream id before any entry: reading after it returns the whole stream. */
export const STREAM_START_ID = "0-0";

/** Orders stream ids `ms-seq` numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split("-").map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split("-").map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

export interface StreamInfo {
  readonly lastGeneratedId: string | undefined;
  /** Redis >= 7.0; moved by XDEL (not by trimming). */
  readonly maxDeletedEntryId: string | undefined;
  readonly firstEntryId: string | undefined;
  /** Redis >= 7.0: entries ever added; more than `length` means some were trimmed or deleted. */
  readonly entriesAdded: number | undefined;
  readonly length: number | undefined;
}

/** XINFO STREAM of one stream: its state, or the error Redis answered (a missing stream is one). */
export type StreamInfoReply = { readonly info: StreamInfo } | { readonly error: Error };

/**
 * XINFO STREAM of each key, sent together and answered in order. One command per key: on Redis Cluster each
 * stream lives in its own cluster's slot, which one pipeline cannot span.
 */
export function readStreamInfos(redis: Redis | Cluster, keys: readonly string[]): Promise<StreamInfoReply[]> {
  return Promise.all(
    keys.map((key) =>
      redis.xinfo("STREAM", key).then(
        (reply): StreamInfoReply => ({ info: parseStreamInfo(reply) }),
        (error: Error): StreamInfoReply => ({ error }),
      ),
    ),
  );
}

/**
 * Why resuming after `lastId` could miss changes, or undefined when it cannot; throws an error other than a
 * missing stream (the caller retries).
 */
export function resumeGapReason(reply: StreamInfoReply, lastId: string): string | undefined {
  if ("info" in reply) return streamGapReason(reply.info, lastId);
  if (!/no such key/i.test(reply.error.message)) throw reply.error;
  return lastId === STREAM_START_ID ? undefined : "change stream is gone";
}

/**
 * Whether resuming XREAD after `lastId` could miss changes. Trimming removes the oldest entries, so while our
 * own entry is still the oldest or older, nothing after it is gone; once the oldest entry is newer than ours,
 * entries after ours may have been trimmed (conservatively: reload).
 */
export function streamGapReason(info: StreamInfo, lastId: string): string | undefined {
  if (info.lastGeneratedId !== undefined && compareStreamIds(info.lastGeneratedId, lastId) < 0) {
    return "change stream was reset";
  }
  if (info.maxDeletedEntryId !== undefined && compareStreamIds(info.maxDeletedEntryId, lastId) > 0) {
    return "change stream entries after our position were deleted";
  }
  if (info.firstEntryId === undefined || compareStreamIds(info.firstEntryId, lastId) <= 0) return undefined;
  if (lastId !== STREAM_START_ID) return "change stream was trimmed past our position";
  // We started from an empty stream: a gap only if something was ever removed (unknown before Redis 7: assume so).
  const removed =
    info.entriesAdded === undefined || info.length === undefined || info.entriesAdded > info.length;
  return removed ? "change stream was trimmed past our position" : undefined;
}

/** XINFO STREAM's flat reply. */
function parseStreamInfo(reply: unknown): StreamInfo {
  const pairs = Array.isArray(reply) ? flatPairs<unknown>(reply) : [];
  const fields = new Map(pairs.map(([name, value]) => [String(name), value]));
  const text = (name: string) => {
    const value = fields.get(name);
    return typeof value === "string" ? value : undefined;
  };
  const count = (name: string) => {
    const value = fields.get(name);
    return typeof value === "number" ? value : undefined;
  };
  const first = fields.get("first-entry");
  const firstId: unknown = Array.isArray(first) ? first[0] : undefined;
  return {
    lastGeneratedId: text("last-generated-id"),
    maxDeletedEntryId: text("max-deleted-entry-id"),
    firstEntryId: typeof firstId === "string" ? firstId : undefined,
    entriesAdded: count("entries-added"),
    length: count("length"),
  };
}

/** A stream entry's `[name, value, name, value, ...]` as an object; a trailing odd name is dropped. */
export function streamEntryFields(fields: readonly string[]): Record<string, string> {
  return Object.fromEntries(flatPairs(fields));
}

/** The id of the first entry of an XRANGE/XREVRANGE reply (XREVRANGE ... COUNT 1: the stream's last). */
export function lastEntryId(reply: unknown): string | undefined {
  if (!Array.isArray(reply)) return undefined;
  const first: unknown = reply[0];
  if (!Array.isArray(first)) return undefined;
  const id: unknown = first[0];
  return typeof id === "string" ? id : undefined;
}

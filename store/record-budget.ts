import { MAX_RECORD_BYTES } from "./records.js";

/**
 * What a Node router holds of one cluster's records at most (docs/design.md, router rule 10): bytes and records
 * of its service and route records (serialized, as Redis stores them), and the size of one record. Records
 * beyond are refused, left out as an invalid record is, and reported; every other cluster keeps serving. The
 * decoded form costs a few times the serialized bytes (docs/operations.md says how to size the budget).
 */
export interface RecordBudget {
  /** CLUSTER_MAX_BYTES: serialized bytes of one cluster's records held at most. */
  readonly maxBytes: number;
  /** CLUSTER_MAX_RECORDS: service and route records of one cluster held at most. */
  readonly maxRecords: number;
  /** RECORD_MAX_BYTES: one record longer than this is refused unread (at most MAX_RECORD_BYTES). */
  readonly maxRecordBytes: number;
}

export const DEFAULT_RECORD_BUDGET: RecordBudget = {
  maxBytes: 8 * 1024 * 1024,
  maxRecords: 10_000,
  maxRecordBytes: 1024 * 1024,
};

/** No budget: only the schema's own limit on one record (readers that hold what they are asked for). */
export const UNBOUNDED_RECORD_BUDGET: RecordBudget = {
  maxBytes: Number.POSITIVE_INFINITY,
  maxRecords: Number.POSITIVE_INFINITY,
  maxRecordBytes: MAX_RECORD_BYTES,
};

export type RecordKind = "service" | "route";

/** Why a record was left out: longer than one record may be, or past the cluster's bytes or records. */
export type BudgetReason = "record-size" | "budget";

export interface RefusedRecord {
  readonly kind: RecordKind;
  readonly id: string;
  /** Its serialized length as Redis reported it. */
  readonly bytes: number;
  readonly reason: BudgetReason;
}

/** What a reader holds and refused of one cluster, for explain, the dashboard and the metrics. */
export interface BudgetReport {
  /** Bytes held (serialized, plus what routes add to the route table: routeCost), and records held. */
  readonly bytes: number;
  readonly records: number;
  /** The first few records refused (REFUSED_SHOWN), and how many there are. */
  readonly refused: readonly RefusedRecord[];
  readonly refusedCount: number;
  /** Set when none of the cluster's records was read, and why (a cluster CLUSTER_GRANTS does not list). */
  readonly unread?: string | undefined;
  /** Its change stream ran past CLUSTER_MAX_CHANGES_PER_SECOND: its entries are applied at that rate. */
  readonly throttled?: boolean | undefined;
}

export const REFUSED_SHOWN = 5;

/** BudgetReport.unread of a cluster whose records are not read because CLUSTER_GRANTS does not list it. */
export const NOT_GRANTED = "CLUSTER_GRANTS does not list it";

interface Held {
  readonly bytes: number;
  /** Of the serialized form: an unchanged record named again is not decoded again. */
  readonly digest: string;
}

/**
 * The records of one cluster a reader holds, by kind and id, within a budget. Mutable, owned by one reader and
 * changed one batch at a time; `report()` is the immutable view of it.
 */
export class HeldRecords {
  readonly budget: RecordBudget;
  #bytes = 0;
  readonly #held = new Map<string, Held>();
  readonly #refused = new Map<string, RefusedRecord>();

  constructor(budget: RecordBudget) {
    this.budget = budget;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get count(): number {
    return this.#held.size;
  }

  /** The digest of the record held under kind and id, if any. */
  digestOf(kind: RecordKind, id: string): string | undefined {
    return this.#held.get(keyOf(kind, id))?.digest;
  }

  /**
   * Whether a record of `bytes` may be held in place of the one held under its id (which is let go either way
   * when it does not fit: the cluster no longer publishes that one). A refusal is remembered until the id is
   * admitted or removed.
   */
  admit(kind: RecordKind, id: string, bytes: number, checkSize = true): RefusedRecord | undefined {
    const key = keyOf(kind, id);
    const before = this.#held.get(key);
    if (before) {
      this.#held.delete(key);
      this.#bytes -= before.bytes;
    }
    const { maxBytes, maxRecords, maxRecordBytes } = this.budget;
    let reason: BudgetReason | undefined;
    if (checkSize && bytes > maxRecordBytes) reason = "record-size";
    else if (this.#bytes + bytes > maxBytes || this.#held.size + 1 > maxRecords) reason = "budget";
    if (reason) {
      const refused = { kind, id, bytes, reason };
      this.#refused.set(key, refused);
      return refused;
    }
    this.#refused.delete(key);
    this.#held.set(key, { bytes, digest: "" });
    this.#bytes += bytes;
    return undefined;
  }

  /**
   * The cost of a held record once decoded (routeCost): admitted again at that cost, its digest kept; refused
   * (and let go) when it no longer fits.
   */
  resize(kind: RecordKind, id: string, cost: number): RefusedRecord | undefined {
    const digest = this.digestOf(kind, id);
    // The size one record may have bounds what is transferred; its decoded cost counts against the cluster's.
    const refused = this.admit(kind, id, cost, false);
    if (!refused && digest !== undefined) this.read(kind, id, digest);
    return refused;
  }

  /** Records the digest of an admitted record once it is read. */
  read(kind: RecordKind, id: string, digest: string): void {
    const key = keyOf(kind, id);
    const held = this.#held.get(key);
    if (held) this.#held.set(key, { bytes: held.bytes, digest });
  }

  /** The record is gone (removed, or unreadable): nothing is held or refused under its id. */
  remove(kind: RecordKind, id: string): void {
    const key = keyOf(kind, id);
    const before = this.#held.get(key);
    if (before) {
      this.#held.delete(key);
      this.#bytes -= before.bytes;
    }
    this.#refused.delete(key);
  }

  report(extra: Pick<BudgetReport, "unread" | "throttled"> = {}): BudgetReport {
    const refused: RefusedRecord[] = [];
    for (const record of this.#refused.values()) {
      if (refused.length >= REFUSED_SHOWN) break;
      refused.push(record);
    }
    return {
      bytes: this.#bytes,
      records: this.#held.size,
      refused,
      refusedCount: this.#refused.size,
      ...(extra.unread === undefined ? {} : { unread: extra.unread }),
      ...(extra.throttled ? { throttled: true } : {}),
    };
  }
}

/**
 * What each hostname of a route adds to the route table per match of its rules (a candidate in a host bucket,
 * its rank, its listeners), counted as this many serialized bytes: a route of thousands of hostnames costs the
 * router far more than its few bytes per name (measured about 560 bytes of heap per candidate).
 */
export const ROUTE_CANDIDATE_COST = 128;

/** A route record's cost against the budget: its serialized length, plus ROUTE_CANDIDATE_COST per candidate. */
export function routeCost(
  bytes: number,
  route: {
    readonly hostnames: readonly unknown[];
    readonly rules: readonly { readonly matches: readonly unknown[] }[];
  },
): number {
  let matches = 0;
  for (const rule of route.rules) matches += rule.matches.length;
  return bytes + ROUTE_CANDIDATE_COST * Math.max(1, route.hostnames.length) * matches;
}

function keyOf(kind: RecordKind, id: string): string {
  return `${kind === "service" ? "s" : "r"} ${id}`;
}

/**
 * A 64-bit digest of a serialized record (two 32-bit FNV-1a variants over its UTF-16 code units, and its
 * length): tells an unchanged record named again by the change stream from a changed one without decoding it.
 * Not a defence against a cluster that crafts a collision: that only keeps its own older record.
 */
export function recordDigest(raw: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ raw.length;
  for (let index = 0; index < raw.length; index++) {
    const unit = raw.charCodeAt(index);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995) ^ (b >>> 15);
  }
  return `${raw.length}:${(a >>> 0).toString(16)}:${(b >>> 0).toString(16)}`;
}

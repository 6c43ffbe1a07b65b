import { endpointAddress, type FamilyRecord, type ServiceRecord } from "../../store/records.js";
import type { ServiceRecordV2 } from "../../store/services.js";

/**
 * The safety valve (docs/design.md, sync rule 5): a Service that suddenly loses most of its endpoints is more
 * often a partial list, a broken controller or an API hiccup than a real scale-down, and publishing it
 * would pour all traffic onto the few survivors. Such a change is held until it has persisted for `holdMs`.
 *
 * Only the net loss counts (before minus after, over the distinct published endpoints of both families):
 * a rollout that swaps every pod for a new, ready one loses nothing and passes at once. Deleting a Service
 * or withdrawing its exposure never goes through the valve: those are deliberate acts, published at once.
 * For a record of schema version 2 only the ports both records serve count: a port no route references any
 * more is withdrawn deliberately too.
 */
export interface ValveConfig {
  /** A change losing more than this fraction of the endpoints is held. 0.5 by default. */
  readonly maxLossFraction: number;
  /** ...and at least this many endpoints: small Services (1 → 0) are not held. 2 by default. */
  readonly minLoss: number;
  /** How long the reduced state must persist before it is published. 30 s by default. */
  readonly holdMs: number;
}

export const DEFAULT_VALVE_CONFIG: ValveConfig = { maxLossFraction: 0.5, minLoss: 2, holdMs: 30_000 };

export type ValveVerdict =
  | { readonly action: "publish" }
  | {
      readonly action: "hold";
      /** When the reduced state was first seen (kept across re-checks). */
      readonly heldSince: number;
      /** When the change will be published if it is still reduced. */
      readonly releaseAt: number;
      readonly before: number;
      readonly after: number;
    };

/** A service record of either schema version. */
export type ValveRecord = ServiceRecord | ServiceRecordV2;

export interface ValveInput {
  /** What is in the store now; undefined when nothing is (a first publish is never held). */
  readonly published: ValveRecord | undefined;
  readonly next: ValveRecord;
  /** Set when the previous verdict for this Service was a hold still pending. */
  readonly heldSince: number | undefined;
  readonly now: number;
  readonly config: ValveConfig;
}

/** Pure: decides whether `next` may replace `published` now. */
export function judgeChange(input: ValveInput): ValveVerdict {
  const { published, next, config, now } = input;
  if (!published) return { action: "publish" };
  const { before, after } = endpointCounts(published, next);
  const loss = before - after;
  const massRemoval = loss >= config.minLoss && loss > before * config.maxLossFraction;
  if (!massRemoval) return { action: "publish" };
  const heldSince = input.heldSince ?? now;
  const releaseAt = heldSince + config.holdMs;
  if (now >= releaseAt) return { action: "publish" };
  return { action: "hold", heldSince, releaseAt, before, after };
}

/** Distinct active endpoints over both families, as `ip:port`. */
export function endpointCount(record: ServiceRecord): number {
  return distinctEndpoints([record]);
}

/**
 * Distinct active endpoints of both records: all of them for two version 1 records, else those of the port
 * numbers both serve (a version 1 record serves its one port).
 */
export function endpointCounts(published: ValveRecord, next: ValveRecord): { before: number; after: number } {
  if (published.v === 1 && next.v === 1)
    return { before: endpointCount(published), after: endpointCount(next) };
  const before = portsOf(published);
  const after = portsOf(next);
  const common = [...before.keys()].filter((number) => after.has(number));
  const pick = (ports: Map<number, Families>) => common.flatMap((number) => ports.get(number) ?? []);
  return { before: distinctEndpoints(pick(before)), after: distinctEndpoints(pick(after)) };
}

type Families = { readonly ipv4: FamilyRecord; readonly ipv6: FamilyRecord };

function portsOf(record: ValveRecord): Map<number, Families> {
  if (record.v === 1) return new Map([[record.port.number, record]]);
  return new Map(record.ports.map((port) => [port.number, port]));
}

function distinctEndpoints(families: readonly Families[]): number {
  const addresses = new Set<string>();
  for (const family of families) {
    for (const endpoint of family.ipv4.endpoints) addresses.add(endpointAddress(endpoint));
    for (const endpoint of family.ipv6.endpoints) addresses.add(endpointAddress(endpoint));
  }
  return addresses.size;
}

/**
 * A valve for one cluster's Services; the reconciler asks it before every write that shrinks a Service. Its
 * state: per Service, since when a mass removal has been held.
 */
export class SafetyValve {
  readonly #config: ValveConfig;
  readonly #heldSince = new Map<string, number>();

  constructor(config: ValveConfig = DEFAULT_VALVE_CONFIG) {
    this.#config = config;
  }

  judge(service: string, published: ValveRecord | undefined, next: ValveRecord, now: number): ValveVerdict {
    const heldSince = this.#heldSince.get(service);
    const verdict = judgeChange({ published, next, heldSince, now, config: this.#config });
    if (verdict.action === "hold") this.#heldSince.set(service, verdict.heldSince);
    else this.#heldSince.delete(service);
    return verdict;
  }

  /** The Service was published or removed: any pending hold is over. */
  clear(service: string): void {
    this.#heldSince.delete(service);
  }
}

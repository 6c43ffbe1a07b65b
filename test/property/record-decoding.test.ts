import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Result } from "../../lib/result.js";
import {
  decodeHeartbeatRecord,
  decodeRouteRecord,
  decodeServiceRecord,
  serializeRouteRecord,
  serializeServiceRecord,
} from "../../store/records.js";
import { heartbeatRecordArb, routeRecordArb, serviceRecordArb } from "./record-arbitraries.js";

/** Each decoder with the encoder of its record: anything a decoder accepts must re-encode and decode unchanged. */
const decoders = [
  { name: "service", reencode: (raw: string) => roundTrip(decodeServiceRecord, serializeServiceRecord, raw) },
  { name: "route", reencode: (raw: string) => roundTrip(decodeRouteRecord, serializeRouteRecord, raw) },
  { name: "heartbeat", reencode: (raw: string) => roundTrip(decodeHeartbeatRecord, JSON.stringify, raw) },
];

function roundTrip<T>(
  decode: (raw: string) => Result<T>,
  encode: (value: T) => string,
  raw: string,
): { first: Result<T>; second: Result<T> | undefined } {
  const first = decode(raw);
  return { first, second: first.ok ? decode(encode(first.value)) : undefined };
}

/** Junk a Redis value could plausibly hold: random text, random JSON, and JSON that looks almost right. */
const junkArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify({ v: 1, ...asObject(value) })),
  serviceRecordArb.chain((record) =>
    fc
      .tuple(fc.constantFrom(...Object.keys(record)), fc.jsonValue({ maxDepth: 2 }))
      .map(([key, value]) => JSON.stringify({ ...record, [key]: value })),
  ),
);

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value };
}

describe("record decoding with random junk", () => {
  it.each(decoders)(
    "the $name decoder never throws on random junk, and anything it accepts re-encodes to the same record",
    ({ reencode }) => {
      fc.assert(
        fc.property(junkArb, (raw) => {
          const { first, second } = reencode(raw);
          if (first.ok) expect(second).toEqual(first);
          else expect(first.error.length).toBeGreaterThan(0);
        }),
        { numRuns: 400 },
      );
    },
  );

  it("a valid service record decodes back to exactly what was written", () => {
    fc.assert(
      fc.property(serviceRecordArb, (record) => {
        expect(decodeServiceRecord(serializeServiceRecord(record))).toEqual({ ok: true, value: record });
      }),
      { numRuns: 300 },
    );
  });

  it("a valid route record and heartbeat decode back to exactly what was written", () => {
    fc.assert(
      fc.property(routeRecordArb, heartbeatRecordArb, (route, beat) => {
        expect(decodeRouteRecord(serializeRouteRecord(route))).toEqual({ ok: true, value: route });
        expect(decodeHeartbeatRecord(JSON.stringify(beat))).toEqual({ ok: true, value: beat });
      }),
      { numRuns: 200 },
    );
  });

  it("a service record cut short anywhere is rejected, never half-decoded", () => {
    fc.assert(
      fc.property(
        serviceRecordArb,
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (record, at) => {
          const raw = serializeServiceRecord(record);
          const cut = raw.slice(0, Math.floor(at * raw.length));
          expect(decodeServiceRecord(cut).ok).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a service record of another schema version or with a required field removed is rejected", () => {
    fc.assert(
      fc.property(
        serviceRecordArb,
        fc.constantFrom("v", "cluster", "service", "hosts", "pathPrefix", "port", "ipv4", "ipv6"),
        fc.integer({ min: 2, max: 99 }),
        (record, dropped, otherVersion) => {
          const withoutField: Record<string, unknown> = { ...record };
          delete withoutField[dropped];
          expect(decodeServiceRecord(JSON.stringify(withoutField)).ok).toBe(false);
          expect(decodeServiceRecord(JSON.stringify({ ...record, v: otherVersion })).ok).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeChangeEntry } from "../../store/changes.js";
import { serializeServiceRecord } from "../../store/records.js";
import { serializeServiceRecordV2, serviceRecordFromV1 } from "../../store/services.js";
import { decodeStoredRoute, decodeStoredService } from "../../store/stored-records.js";
import { serviceRecordArb, serviceRecordV2Arb } from "./record-arbitraries.js";

/** The routers' decoding of every schema version (store/stored-records.ts) against random records and junk. */
const junkArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify({ v: 2, value })),
  serviceRecordV2Arb.chain((record) =>
    fc
      .tuple(fc.constantFrom("v", "cluster", "service", "ports"), fc.jsonValue({ maxDepth: 2 }))
      .map(([key, value]) => JSON.stringify({ ...record, [key]: value })),
  ),
);

describe("stored records of any version", () => {
  it("a version 2 record decodes to exactly what was written; a version 1 record to its conversion", () => {
    fc.assert(
      fc.property(serviceRecordV2Arb, serviceRecordArb, (v2, v1) => {
        expect(decodeStoredService(v2.cluster, v2.service, serializeServiceRecordV2(v2))?.record).toEqual({
          ...v2,
          ports: [...v2.ports].sort((a, b) => a.number - b.number),
        });
        const legacy = decodeStoredService(v1.cluster, v1.service, serializeServiceRecord(v1));
        expect(legacy?.record).toEqual(serviceRecordFromV1(v1));
        expect(legacy?.v1?.route.id).toBe(`annotation:${v1.service}`);
      }),
      { numRuns: 200 },
    );
  });

  it("never throws on junk, as a service, a route or a change entry", () => {
    fc.assert(
      fc.property(
        junkArb,
        fc.dictionary(fc.constantFrom("v", "kind", "id", "op", "service"), fc.string()),
        (raw, fields) => {
          decodeStoredService("east", "shop/web", raw);
          decodeStoredRoute("east", "httproute:shop/web", raw);
          const change = decodeChangeEntry(fields);
          if (change.ok) expect(change.changes.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 400 },
    );
  });
});

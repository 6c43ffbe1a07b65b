import * as v from "valibot";
import { annotationRouteId } from "./legacy.js";
import { ServiceIdSchema } from "./names.js";
import { ChangeEntrySchema, ChangeOpSchema } from "./records.js";
import { NEWEST_SCHEMA_VERSION } from "./schema-version.js";

/**
 * Change stream entries, schema version 2: `{ kind, id, op }` names one service record (`ns/name`) or one
 * route record (its id) that was put or deleted; a reader re-reads what it names. An entry may carry `v`
 * (the schema version, "2"); one with a newer `v` is refused. Version 1 entries (`{ service, op }`, records.ts)
 * stand for both the service and the annotation route a version 1 record carries.
 */
export const CHANGE_KINDS = ["service", "route"] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

const RouteIdSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(512));

export const ChangeEntryV2Schema = v.variant("kind", [
  v.object({ kind: v.literal("service"), id: ServiceIdSchema, op: ChangeOpSchema }),
  v.object({ kind: v.literal("route"), id: RouteIdSchema, op: ChangeOpSchema }),
]);
export type StoreChangeEntry = v.InferOutput<typeof ChangeEntryV2Schema>;

export type DecodedChange =
  | { readonly ok: true; readonly changes: readonly StoreChangeEntry[] }
  | { readonly ok: false; readonly newerVersion?: number };

/** One stream entry's fields as the changes it stands for. */
export function decodeChangeEntry(fields: Readonly<Record<string, string>>): DecodedChange {
  if (fields.v !== undefined) {
    const version = Number(fields.v);
    if (Number.isSafeInteger(version) && version > NEWEST_SCHEMA_VERSION) {
      return { ok: false, newerVersion: version };
    }
  }
  if (fields.kind !== undefined) {
    const entry = v.safeParse(ChangeEntryV2Schema, { kind: fields.kind, id: fields.id, op: fields.op });
    return entry.success ? { ok: true, changes: [entry.output] } : { ok: false };
  }
  const legacy = v.safeParse(ChangeEntrySchema, { service: fields.service, op: fields.op });
  if (!legacy.success) return { ok: false };
  const { service, op } = legacy.output;
  return {
    ok: true,
    changes: [
      { kind: "service", id: service, op },
      { kind: "route", id: annotationRouteId(service), op },
    ],
  };
}

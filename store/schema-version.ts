import type { WarnOnce } from "../lib/warn-once.js";

/**
 * The newest record schema version this code reads. Syncs and routers are upgraded one at a time, so a router
 * reads every version up to this one and refuses a newer one: the documented upgrade order is routers first,
 * then syncs.
 */
export const NEWEST_SCHEMA_VERSION = 2;

/** The one line a router logs per cluster and version when a sync writes a version it does not understand. */
export function newerVersionMessage(version: number): string {
  return `record schema version ${version} is newer than this router understands (${NEWEST_SCHEMA_VERSION}): upgrade routers before syncs`;
}

/** The integer version a parsed record declares (`v`), when it is newer than NEWEST_SCHEMA_VERSION. */
export function newerVersionOf(parsed: unknown): number | undefined {
  if (parsed === null || typeof parsed !== "object") return undefined;
  const version: unknown = (parsed as { v?: unknown }).v;
  return typeof version === "number" && Number.isSafeInteger(version) && version > NEWEST_SCHEMA_VERSION
    ? version
    : undefined;
}

/** Versions this far past the newest are no upgrade in progress: reported together, once per cluster. */
const FAR_VERSIONS = 8;

/**
 * Reports a record (or change entry) of a newer version: once per cluster and version for as long as the
 * reader lives, whatever the number of records; `fields` say which record met it first. Versions far past the
 * newest are reported once per cluster for all of them, so a cluster writing thousands of made-up versions
 * cannot flood the log.
 */
export function reportNewerVersion(
  warnings: WarnOnce | undefined,
  cluster: string,
  version: number,
  fields: Record<string, unknown>,
): void {
  const bucket = version > NEWEST_SCHEMA_VERSION + FAR_VERSIONS ? "far" : String(version);
  warnings?.warn(`schema version ${cluster} ${bucket}`, "newer", newerVersionMessage(version), {
    cluster,
    version,
    ...fields,
  });
}

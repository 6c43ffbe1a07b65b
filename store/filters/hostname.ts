import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { PreciseHostnameSchema } from "../wire-values.js";

/** A redirect's or rewrite's hostname, lower-cased (Gateway API PreciseHostname: no wildcard). */
export function translatePreciseHostname(hostname: string): Result<string> {
  const lower = hostname.toLowerCase();
  if (v.is(PreciseHostnameSchema, lower)) return { ok: true, value: lower };
  return { ok: false, error: `hostname ${JSON.stringify(hostname)} is not a host name without a wildcard` };
}

import type { Result } from "../../../lib/result.js";
import type { RuleTimeouts } from "../../../store/routes.js";

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
/** Gateway API Duration: one to four number-unit pairs of up to five digits, e.g. `1h30m`, `500ms`. */
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const PART = /([0-9]{1,5})(ms|h|m|s)/g;

/** A Gateway API Duration in ms; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, digits, unit] of text.matchAll(PART)) total += Number(digits) * (UNIT_MS[unit ?? ""] ?? 0);
  return total;
}

/**
 * HTTPRouteRule.timeouts → the rule's limits. "Setting a timeout to the zero duration (e.g. "0s") SHOULD
 * disable the timeout completely": a zero leaves the router's own limit, which is never infinite. The CRD
 * refuses backendRequest above request; a value the schema would not hold is refused with the rule.
 */
export function translateTimeouts(raw: unknown): Result<RuleTimeouts | undefined> {
  if (raw === null || raw === undefined) return { ok: true, value: undefined };
  if (typeof raw !== "object") return { ok: false, error: "timeouts is not an object" };
  const out: { requestMs?: number; backendRequestMs?: number } = {};
  for (const [field, key] of [
    ["request", "requestMs"],
    ["backendRequest", "backendRequestMs"],
  ] as const) {
    const value = (raw as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    const ms = typeof value === "string" ? durationMs(value) : undefined;
    if (ms === undefined)
      return { ok: false, error: `timeouts.${field} "${String(value)}" is not a duration` };
    if (ms > 86_400_000) return { ok: false, error: `timeouts.${field} is longer than a day` };
    if (ms > 0) out[key] = ms;
  }
  if (
    out.requestMs !== undefined &&
    out.backendRequestMs !== undefined &&
    out.backendRequestMs > out.requestMs
  )
    return { ok: false, error: "timeouts.backendRequest is longer than timeouts.request" };
  return { ok: true, value: Object.keys(out).length > 0 ? out : undefined };
}

import type { Result } from "../../../lib/result.js";
import { MAX_RULE_RETRIES, type RuleRetry } from "../../../store/routes.js";
import { durationMs } from "./timeouts.js";

/** A rule's retry as the record carries it, and what of it was read but not applied (logged). */
export interface RetryTranslation {
  readonly retry: RuleRetry | undefined;
  readonly ignored: readonly string[];
}

/**
 * HTTPRouteRule.retry (experimental channel) → the rule's retry. `codes`: 400-599, as the CRD allows
 * (HTTPRouteRetryStatusCode); `attempts`: retries after the first attempt ("the maximum number of times an
 * individual request from the gateway to a backend should be retried"), more than MAX_RULE_RETRIES read as
 * that many; `backoff`: a Gateway API Duration, the least wait before a retry ("0s": none). A value the CRD
 * would refuse drops the rule.
 */
export function translateRetry(raw: unknown): Result<RetryTranslation> {
  if (raw === null || raw === undefined) return { ok: true, value: { retry: undefined, ignored: [] } };
  if (typeof raw !== "object" || Array.isArray(raw)) return { ok: false, error: "retry is not an object" };
  const fields = raw as Record<string, unknown>;
  const codes = readCodes(fields.codes);
  if (!codes.ok) return codes;
  const ignored: string[] = [];
  const retry: { codes: number[]; attempts?: number; backoffMs?: number } = { codes: codes.value };
  const attempts = fields.attempts;
  if (attempts !== undefined && attempts !== null) {
    if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1)
      return { ok: false, error: `retry.attempts ${String(attempts)} is not a whole number of at least 1` };
    if (attempts > MAX_RULE_RETRIES) ignored.push(`retry.attempts above ${MAX_RULE_RETRIES}`);
    retry.attempts = Math.min(attempts, MAX_RULE_RETRIES);
  }
  const backoff = fields.backoff;
  if (backoff !== undefined && backoff !== null) {
    const ms = typeof backoff === "string" ? durationMs(backoff) : undefined;
    if (ms === undefined) return { ok: false, error: `retry.backoff "${String(backoff)}" is not a duration` };
    if (ms > 86_400_000) return { ok: false, error: "retry.backoff is longer than a day" };
    if (ms > 0) retry.backoffMs = ms;
  }
  return { ok: true, value: { retry, ignored } };
}

function readCodes(raw: unknown): Result<number[]> {
  if (raw === undefined || raw === null) return { ok: true, value: [] };
  if (!Array.isArray(raw)) return { ok: false, error: "retry.codes is not a list" };
  const codes = new Set<number>();
  for (const code of raw) {
    if (typeof code !== "number" || !Number.isInteger(code) || code < 400 || code > 599)
      return { ok: false, error: `retry.codes: ${String(code)} is not a status code from 400 to 599` };
    codes.add(code);
  }
  return { ok: true, value: [...codes].sort((a, b) => a - b) };
}

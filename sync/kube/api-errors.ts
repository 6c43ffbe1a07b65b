/** An API server answer other than success, with its metav1.Status fields when the body carried them. */
export class ApiStatusError extends Error {
  readonly statusCode: number;
  readonly reason: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(statusCode: number, body: unknown, retryAfterSeconds?: number) {
    const status = statusFields(body);
    super(status.message ?? `the API server answered ${statusCode}`);
    this.name = "ApiStatusError";
    this.statusCode = statusCode;
    this.reason = status.reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The fields of a metav1.Status (a failed response's body, or a watch ERROR event's object). */
export function statusFields(body: unknown): { code?: number; reason?: string; message?: string } {
  if (typeof body !== "object" || body === null) return {};
  const { code, reason, message } = body as Record<string, unknown>;
  return {
    ...(typeof code === "number" ? { code } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
    ...(typeof message === "string" ? { message } : {}),
  };
}

/**
 * HTTP status of an error, undefined when it carries none (a refused connection, a timeout): ours
 * (ApiStatusError), or any error with a numeric `statusCode` or `code`.
 */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof statusCode === "number") return statusCode;
  if (typeof code === "number") return code;
  return undefined;
}

/**
 * What a failed request means to the sync:
 * - `unreachable`: no answer (refused, reset, timed out), 5xx, 429: the API server is down, starting or
 *   overloaded; retry soon, keep serving what is known.
 * - `forbidden`: 401/403. During start-up an API server answers 403 for about a second before its RBAC cache
 *   is ready, so one is retried quietly; only a refusal that persists is an RBAC problem.
 * - `expired`: the resourceVersion can no longer be resumed (410 Gone, or 504 "Too large resource version"
 *   after an etcd restore, as client-go's reflector treats it): list again.
 * - `starting`: 503 "the request has been made before all known HTTP paths have been installed" (with
 *   Retry-After: 5): a kube-apiserver (1.24+) that just started answers this for any path it does not know
 *   yet, a CRD's resources among them, until its CRD informer has synced; then it serves them (or answers a
 *   plain 404 for a kind whose CRD is not installed). It answers, so it is reachable: wait as it asks.
 * - `rejected`: any other 4xx, which a retry will not change.
 */
export type FailureKind = "unreachable" | "forbidden" | "expired" | "starting" | "rejected";

/** The message of kube-apiserver's notfoundhandler while its MuxAndDiscoveryComplete signal is not closed. */
const PATHS_NOT_INSTALLED = /before all known HTTP paths have been installed/;

export function failureKind(error: unknown): FailureKind {
  const status = statusOf(error);
  if (status === undefined) return "unreachable";
  return statusKind(status, error instanceof ApiStatusError ? error.message : "");
}

/** failureKind for an HTTP status or a watch ERROR event's Status code. */
export function statusKind(status: number, message = ""): FailureKind {
  if (status === 410) return "expired";
  if (status === 504 && /too large resource version/i.test(message)) return "expired";
  if (status === 401 || status === 403) return "forbidden";
  if (status === 503 && PATHS_NOT_INSTALLED.test(message)) return "starting";
  if (status === 429 || status >= 500) return "unreachable";
  return "rejected";
}

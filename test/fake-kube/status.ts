/** metav1.Status bodies, the error shape every API server response and watch ERROR event uses. */
export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string };
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Expired",
  500: "InternalError",
  503: "ServiceUnavailable",
};

export function statusBody(
  code: number,
  message: string,
  reason?: string,
  details?: StatusBody["details"],
): StatusBody {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: reason ?? REASONS[code] ?? "Unknown",
    ...(details ? { details } : {}),
    code,
  };
}

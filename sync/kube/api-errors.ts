/**
 * HTTP status of a client-node error, undefined when it carries none (a refused connection, a timeout):
 * the generated APIs throw ApiException with `code`, Watch rejects with an error carrying `statusCode`.
 */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof statusCode === "number") return statusCode;
  if (typeof code === "number") return code;
  return undefined;
}

import type { RouterError } from "../../core/http/errors.js";

/**
 * RFC 9113 §8.3.1: :authority must not carry userinfo, and a request whose Host names another authority than
 * its :authority is malformed. The router routes on :authority (Host when it is absent), so a Host that
 * disagrees would let a backend that reads Host see another site than the one routed: refused as 400.
 */
export function authorityProblem(
  authority: string | string[] | undefined,
  host: string | undefined,
): RouterError | undefined {
  if (typeof authority !== "string" || authority === "") return undefined;
  if (authority.includes("@")) return "bad_request";
  if (host !== undefined && host.toLowerCase() !== authority.toLowerCase()) return "bad_request";
  return undefined;
}

import * as v from "valibot";
import { integerFromEnv } from "../../../lib/env.js";
import { DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS } from "./routing-defaults.js";

/** How long an exchange waits on each side, and how often it tries again (router-env.ts spreads them in place). */
export const EXCHANGE_ENV = {
  UPSTREAM_TRY_TIMEOUT_MS: v.pipe(
    integerFromEnv(10_000, 1, 600_000),
    v.description(
      "per attempt: from the whole request sent (or the connect, without a body) to the response head; a route's `timeouts.backendRequest` replaces it",
    ),
  ),
  UPSTREAM_TOTAL_TIMEOUT_MS: v.pipe(
    integerFromEnv(30_000, 1, 3_600_000),
    v.description(
      "the whole request across retries, from the whole request sent to the response head; a route's `timeouts.request` replaces it",
    ),
  ),
  // nginx's client_body_timeout, default 60 s.
  CLIENT_BODY_IDLE_TIMEOUT_MS: v.pipe(
    integerFromEnv(DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS, 1, 3_600_000),
    v.description(
      "the longest wait for the next bytes of a request body; then 408, and the backend is not blamed",
    ),
  ),
  // A router closing an idle connection first races the balancer's reuse of it, and that request is reset.
  CLIENT_KEEP_ALIVE_TIMEOUT_MS: v.pipe(
    integerFromEnv(65_000, 1, 3_600_000),
    v.description(
      "Node: how long an idle client connection stays open for its next request: above the 60 s idle timeout of AWS, Google Cloud and Azure load balancers, so the balancer closes first ([behind a load balancer](deploy.md#behind-a-load-balancer))",
    ),
  ),
  // Node's request timeout (300 s) bounds a request's head anyway.
  CLIENT_HEADERS_TIMEOUT_MS: v.pipe(
    integerFromEnv(66_000, 1, 300_000),
    v.description(
      "Node: the longest wait for a request's whole head, on a new connection from the connect: above the balancer's idle timeout too, for connections it opens ahead; at most 300000",
    ),
  ),
  UPSTREAM_RETRIES: v.pipe(
    integerFromEnv(2, 0, 10),
    v.description(
      "further attempts on other backends (connect failures, or idempotent methods); an HTTPRoute rule's `retry.attempts` replaces it for that rule ([HTTPRoute](gateway-api.md#httproute))",
    ),
  ),
};

import type { RulePlan } from "./forwarding/filters.js";
import type { RouterError } from "./http/errors.js";
import type { RequestTarget } from "./http/request-target.js";
import type { MirrorTarget } from "./routes/mirrors.js";
import type { RequestFacts } from "./routes/request-match.js";
import type { Selection } from "./selection/selection.js";
import type { ClientLocation } from "./steering/origin.js";

/** What routing reads of a request (RoutingRequest) and what it makes of it (RoutingOutcome): routing.ts. */

/** A route matched but none of its backends can be used (503): its selection labels the answer. */
export interface Unserved {
  readonly error: "no_endpoints";
  readonly selection: Selection;
}

/** A rule with a RequestRedirect: the router answers it itself. */
export interface Redirected {
  readonly redirect: { readonly status: number; readonly location: string };
}

/** A CORS preflight of a rule with a CORS filter: the router answers it 200 with these fields (cors.ts). */
export interface Preflighted {
  readonly preflight: readonly (readonly [string, string])[];
}

/** A request the store has backends for. */
export interface Routed {
  readonly target: RequestTarget;
  readonly selection: Selection;
  /** Origin-form path and query sent upstream: the request's, or URLRewrite's. */
  readonly upstreamPath: string;
  /** The Host sent upstream when URLRewrite sets one. */
  readonly upstreamHost: string | undefined;
  /** The rule's header modifiers (filters.ts). */
  readonly plan: RulePlan;
  /** Copies of the request to send and forget (RequestMirror, routes/mirrors.ts). */
  readonly mirrors: readonly MirrorTarget[];
}

/** What routing reads of a request besides its URL. */
export interface RoutingRequest {
  readonly method: string;
  /** Looked up only when a route matches on headers. */
  readonly headers: RequestFacts["headers"];
  /** The scheme of the client's connection, for redirects; default: the URL's. */
  readonly proto?: "http" | "https";
  /** The TLS SNI of the client's connection (RequestFacts.serverName). */
  readonly serverName?: string | undefined;
  /**
   * The Gateway listener port the client's connection was made to, when the router's port says it (Node: a
   * port of HTTPS_LISTENER_PORTS, core/tls/tls-ports.ts); the port of a Host that names one comes first.
   */
  readonly listenerPort?: number | undefined;
  /** Where the client is, when the runtime knows (Workers: `request.cf`): proximity steering measures from it. */
  readonly client?: ClientLocation | undefined;
}

export type RoutingOutcome = RouterError | Unserved | Redirected | Preflighted | Routed;

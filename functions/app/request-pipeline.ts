import type { CompiledModifier } from "../../store/filters/header-modifier.js";
import type { PolicyDeps } from "../core/forwarding/proxy-policy.js";
import { withRulePolicy } from "../core/forwarding/rule-policy.js";
import type { ErrorAnswer, RouterError } from "../core/http/errors.js";
import { isGrpcRequest } from "../core/http/grpc-errors.js";
import { headAnswer } from "../core/http/head-answers.js";
import type { ForwardingInfo } from "../core/http/headers.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../core/http/request-id.js";
import { requestTarget } from "../core/http/request-target.js";
import { forwardedProto, loggedClient, type TrustedProxies } from "../core/http/trusted-proxies.js";
import type { AccessLog } from "../core/observability/access-log.js";
import { RequestObservation } from "../core/observability/request-observation.js";
import type { RequestTraceStart, RequestTracing } from "../core/observability/tracing.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { Routed, Routing, RoutingOutcome, RoutingRequest } from "../core/routing.js";
import type { Selection } from "../core/selection/selection.js";
import type { ClientLocation } from "../core/steering/origin.js";

/**
 * The one request pipeline above the upstream dispatchers, for every runtime: the request is observed
 * (metrics, access log, request id), routed, answered by the router itself (its errors, a RequestRedirect, a
 * CORS preflight) or mirrored and forwarded. What differs per runtime is only how a request is read and how
 * its answer is written and forwarded (PipelineOutput): Node's request handler (node/request-handler.ts, over
 * its exchange and dispatchers) and the Hono catch-all of Workers and the web path (app.ts, over fetch).
 */

/** What the pipeline reads of one request, from whichever front it came. */
export interface PipelineRequest {
  readonly method: string;
  /** The URL routing reads (core/http/request-target.ts): the connection's scheme, the authority and the target. */
  readonly url: string;
  /** Header lookups of route matching, and the Content-Type of a gRPC call. */
  readonly headers: RoutingRequest["headers"];
  /** The client's X-Request-Id (kept when valid, core/http/request-id.ts). */
  readonly requestId: string | null | undefined;
  /** The scheme of the client's connection; undefined: the URL's (Workers). */
  readonly proto: "http" | "https" | undefined;
  /** The TLS SNI of the client's connection. */
  readonly serverName: string | undefined;
  /** The Gateway listener port the connection was made to, when its router port says it (RoutingRequest). */
  readonly listenerPort?: number | undefined;
  /** The client's address as the runtime knows it. */
  readonly clientIp: string | undefined;
  /** Where the client is, when the runtime knows (Workers' `request.cf`), for proximity steering. */
  readonly clientLocation?: ClientLocation | undefined;
  /** The client's Connection fields joined, when the runtime read them already (node/request-head.ts). */
  readonly connectionFields?: string | null | undefined;
  /** The peer is a trusted proxy (TRUSTED_PROXIES): its forwarding fields are kept and extended. */
  readonly trustedPeer?: boolean;
  /** The HTTP version the client spoke, for the access log. */
  readonly protocol: string | undefined;
}

/** A routed request, as a runtime forwards it. */
export interface ProxyRoute {
  readonly selection: Selection;
  /** Origin-form path and query sent upstream (the route's URLRewrite applied). */
  readonly path: string;
  /** The route's ResponseHeaderModifier (core/forwarding/filters.ts). */
  readonly responseHeaders: CompiledModifier | undefined;
  readonly forwarding: ForwardingInfo;
  /** Metrics and access log of this request (core/observability/request-observation.ts). */
  readonly observation: RequestObservation;
  /** Writes the access log line; set only for a sampled request. Call once the response ended. */
  readonly logEnd: (() => void) | undefined;
}

/** How a runtime answers, mirrors and forwards (T: what its handler returns, Node's nothing, Hono's a Response). */
export interface PipelineOutput<R extends PipelineRequest, T> {
  /** Writes the router's own answer (an error, a redirect, a preflight), counted already; nothing went out yet. */
  answer(run: PipelineRun<R, T>, answer: ErrorAnswer): T;
  /** Sends the copies of a request (RequestMirror), forgetting their answers. */
  mirror(run: PipelineRun<R, T>, mirrors: readonly MirrorTarget[], route: ProxyRoute): void;
  /** Forwards the routed request; an error to answer comes back as `run.fail(error)`. */
  forward(run: PipelineRun<R, T>, route: ProxyRoute, deps: PolicyDeps): T | Promise<T>;
}

export interface PipelineDeps {
  readonly routing: Routing;
  readonly accessLog: AccessLog | undefined;
  readonly newRequestId: () => string;
  /** Spans and W3C trace context (core/observability/tracing.ts). */
  readonly tracing: RequestTracing;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client in the access log. */
  readonly trustedProxies: TrustedProxies;
}

/** One request through the pipeline: an object rather than closures per request. */
export class PipelineRun<R extends PipelineRequest, T> {
  readonly request: R;
  readonly observation: RequestObservation;
  readonly #deps: PipelineDeps;
  readonly #output: PipelineOutput<R, T>;
  readonly #trace: RequestTraceStart;

  constructor(deps: PipelineDeps, request: R, output: PipelineOutput<R, T>) {
    this.#deps = deps;
    this.request = request;
    this.#output = output;
    const method = request.method;
    this.#trace = deps.tracing.enabled ? startTrace(deps.tracing, request) : deps.tracing.untraced;
    this.observation = new RequestObservation(
      requestIdOf(request.requestId, deps.newRequestId),
      method,
      performance.now(),
      deps.accessLog?.sampled() === true,
      this.#trace.span,
    );
    // gRPC calls are POSTs: other methods need no header read (core/http/grpc-errors.ts).
    if (method === "POST") this.observation.grpc = isGrpcRequest(request.headers.get("content-type"));
  }

  /** Routes and serves the request; no promise on the way unless the snapshot or the runtime awaits one. */
  run(): T | Promise<T> {
    const request = this.request;
    // Behind a balancer that ended TLS, redirects keep the scheme the client used.
    const proto =
      request.proto && request.trustedPeer
        ? forwardedProto(request.headers.get("x-forwarded-proto") ?? undefined, request.proto)
        : request.proto;
    const routed = this.#deps.routing.routeNow(request.url, {
      method: request.method,
      headers: request.headers,
      ...(proto ? { proto } : {}),
      serverName: request.serverName,
      listenerPort: request.listenerPort,
      client: request.clientLocation,
    });
    return routed instanceof Promise ? routed.then((outcome) => this.#serve(outcome)) : this.#serve(routed);
  }

  /** The router's own answer to `error`, counted and logged; a HEAD's without its content. */
  fail(error: RouterError): T {
    const { metrics } = this.#deps.routing.policy;
    const answer = this.observation.routerAnswer(metrics, error, performance.now());
    const head = this.request.method === "HEAD";
    if (head) this.observation.bytes = 0;
    this.logLine(undefined, undefined);
    return this.#output.answer(this, head ? headAnswer(answer) : answer);
  }

  /** The access log line (once per request); host and path as routed, else as the URL has them. */
  logLine(routedHost: string | undefined, path: string | undefined): void {
    const observation = this.observation;
    if (!observation.takeLogLine()) return;
    const url = this.request.url;
    const parsed = routedHost === undefined || path === undefined ? URL.parse(url) : undefined;
    const request = this.request;
    const forwardedFor = () => request.headers.get("x-forwarded-for");
    this.#deps.accessLog?.write(
      observation.entry(performance.now(), Date.now(), {
        client: loggedClient(
          request.clientIp,
          request.trustedPeer === true,
          forwardedFor,
          this.#deps.trustedProxies,
        ),
        host: routedHost ?? parsed?.host ?? "",
        path: path ?? (parsed ? `${parsed.pathname}${parsed.search}` : ""),
        protocol: this.request.protocol,
      }),
    );
  }

  #serve(routed: RoutingOutcome): T | Promise<T> {
    if (typeof routed === "string") return this.fail(routed);
    if ("redirect" in routed) {
      const { status, location } = routed.redirect;
      return this.#routerMade(status, [["location", location]]);
    }
    if ("preflight" in routed) return this.#routerMade(200, routed.preflight);
    const { metrics } = this.#deps.routing.policy;
    this.observation.routed(metrics, routed.selection);
    if ("error" in routed) return this.fail(routed.error);
    const route = this.#route(routed);
    if (routed.mirrors.length > 0) this.#output.mirror(this, routed.mirrors, route);
    return this.#output.forward(this, route, withRulePolicy(this.#deps.routing.policy, routed.plan));
  }

  #route(routed: Routed): ProxyRoute {
    const request = this.request;
    const observation = this.observation;
    const forwarding: ForwardingInfo = {
      clientIp: request.clientIp,
      // The scheme of the connection, never of an absolute-form request target.
      proto: request.proto ?? routed.target.proto,
      host: routed.target.authority,
      requestId: observation.requestId,
      upstreamHost: routed.upstreamHost,
      modifier: routed.plan.requestHeaders,
      ...(request.connectionFields !== undefined ? { connection: request.connectionFields } : {}),
      ...(request.trustedPeer ? { trustedPeer: true } : {}),
      trace: this.#trace.fields,
    };
    const path = routed.target.path;
    return {
      selection: routed.selection,
      path: routed.upstreamPath,
      responseHeaders: routed.plan.responseHeaders,
      forwarding,
      observation,
      logEnd: observation.logged ? () => this.logLine(forwarding.host, path) : undefined,
    };
  }

  /** A RequestRedirect (its Location) or a CORS preflight (core/cors.ts), answered by the router: no body. */
  #routerMade(status: number, fields: readonly (readonly [string, string])[]): T {
    const observation = this.observation;
    observation.respond(this.#deps.routing.policy.metrics, status, performance.now(), false);
    observation.bytes = 0;
    this.logLine(undefined, undefined);
    const headers = [...fields, [REQUEST_ID_HEADER, observation.requestId] as const];
    return this.#output.answer(this, { status, headers, body: "" });
  }
}

/** A request's span, named for its method, host and path. */
function startTrace(tracing: RequestTracing, request: PipelineRequest): RequestTraceStart {
  const target = requestTarget(request.url);
  const traced = {
    method: request.method,
    host: target?.authority ?? "",
    path: target?.path ?? "",
    scheme: request.proto ?? target?.proto ?? "http",
    protocol: request.protocol,
    client: request.clientIp,
  };
  return tracing.start(traced, (name) => request.headers.get(name));
}

import { type Context, Hono } from "hono";
import { nextTimerTurn } from "../../lib/exposition-slices.js";
import type { MetricFamily } from "../../lib/prometheus.js";
import type { AccessLog } from "../core/access-log.js";
import type { RouterConfig } from "../core/config.js";
import type { RouterError } from "../core/errors.js";
import { isGrpcRequest } from "../core/grpc-errors.js";
import { headAnswer } from "../core/head-answers.js";
import {
  type ForwardingInfo,
  isWebSocketUpgrade,
  upstreamRequestHeaders,
  upstreamUpgradeHeaders,
} from "../core/headers.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../core/request-id.js";
import { RequestObservation } from "../core/request-observation.js";
import { createRouting, type Routing, type RoutingDeps, type RoutingRequest } from "../core/routing.js";
import { withRulePolicy } from "../core/rule-policy.js";
import type { ClientLocation } from "../core/steering/origin.js";
import { hexOf, TraceIds } from "../core/trace-context.js";
import { propagationOnly, type RequestTracing, type TracedRequest } from "../core/tracing.js";
import { TrafficHistory } from "../core/traffic-history.js";
import { forwardedProto, loggedClient, NO_TRUSTED_PROXIES } from "../core/trusted-proxies.js";
import type { Upstream } from "../transports/upstream.js";
import { type AdminEndpoints, registerAdmin } from "./admin.js";
import { keepRunning, sendWebMirrors } from "./mirror-requests.js";
import type { NativeProxy } from "./native-proxy.js";
import { type ProxyDeps, proxy } from "./web-proxy.js";

export interface AppDeps extends RoutingDeps {
  readonly upstream: Upstream;
  /** Only the routing fields are read: cluster, zone, ipFamily, adminToken, timeouts, retries, metricsBackends. */
  readonly config: RoutingDeps["config"] &
    Pick<RouterConfig, "adminToken"> &
    Partial<Pick<RouterConfig, "metricsBackends" | "trustedProxies">>;
  /** The client's IP as the runtime knows it (Node: socket peer or PROXY header; Workers: CF-Connecting-IP). */
  readonly clientAddress?: (c: Context) => string | undefined;
  /** The client is a trusted proxy (TRUSTED_PROXIES, Node): its forwarding fields are kept; default false. */
  readonly clientTrusted?: (c: Context) => boolean;
  /** Spans and W3C trace context (core/tracing.ts); default: propagation only, ids from crypto.getRandomValues. */
  readonly tracing?: RequestTracing;
  /**
   * The scheme of the client's connection (Node: TLS or not). Never the request target's: an absolute-form
   * `GET https://host/ HTTP/1.1` over plain HTTP is still plain HTTP. Default: the scheme of the URL the
   * runtime built (Workers: Cloudflare's, from the visitor's connection).
   */
  readonly clientProto?: (c: Context) => "http" | "https";
  /** The TLS SNI of the client's connection (routing.ts RoutingRequest.serverName). */
  readonly clientServerName?: (c: Context) => string | undefined;
  /** The Gateway listener port of the client's connection, when its port says it (RoutingRequest.listenerPort). */
  readonly clientListenerPort?: (c: Context) => number | undefined;
  /** The HTTP version the client spoke, for the access log (Node: "1.1" or "2.0"). */
  readonly clientProtocol?: (c: Context) => string | undefined;
  /** A runtime's own proxy (Node: node/proxy.ts); requests it declines take the web path (web-proxy.ts). */
  readonly native?: NativeProxy;
  /** Request headers for route matching, read the cheapest way the runtime has (Node: rawHeaders). */
  readonly requestHeaders?: (c: Context) => RoutingRequest["headers"];
  /** The client's X-Request-Id read the cheapest way the runtime has (Node: rawHeaders); default: the header. */
  readonly incomingRequestId?: (c: Context) => string | undefined;
  /** A new request id; default crypto.randomUUID (Node and Workers). */
  readonly newRequestId?: () => string;
  /** core/access-log.ts; undefined when ACCESS_LOG is off. */
  readonly accessLog?: AccessLog;
  /** A turn of the event loop between slices of a metrics scrape; default a 0 ms timer (Node: setImmediate). */
  readonly yieldToLoop?: () => Promise<void>;
  /** Which of the router's own endpoints this app answers (admin.ts); default "all", beside the proxied traffic. */
  readonly endpoints?: AppEndpoints;
  /** The dashboard's recent samples; default one of the app's own, sampled when the dashboard asks. */
  readonly trafficHistory?: TrafficHistory;
  /** The runtime's `process_*` and `nodejs_*` series for /_edgeslice/metrics (Node); none by default. */
  readonly processFamilies?: () => Iterable<MetricFamily>;
  /** Where the client is, when the runtime knows (Workers: `request.cf`), for proximity steering. */
  readonly clientLocation?: (c: Context) => ClientLocation | undefined;
}

/**
 * "all": one origin, admin behind the token beside the proxied traffic (Workers). On Node the public listener is
 * "public" (proxied traffic and the probes) and the ADMIN_PORT listener "admin" (no proxying at all).
 */
export type AppEndpoints = AdminEndpoints | "admin";

/**
 * The runtime-agnostic router: its own endpoints under /_edgeslice/ (which of them: `deps.endpoints`),
 * everything else routed and proxied, unless the app is the admin listener's.
 * `routing` is built from `deps` unless the runtime shares it with another entry path (Node's upgrades).
 */
export function createApp(deps: AppDeps, routing: Routing = createRouting(deps)): Hono {
  const { policy } = routing;
  const { metrics } = policy;
  const nativeProxy = deps.native;
  const proxyDeps: ProxyDeps = { ...policy, upstream: deps.upstream };
  const { accessLog } = deps;
  const incomingRequestId = deps.incomingRequestId ?? ((c: Context) => c.req.header(REQUEST_ID_HEADER));
  const newRequestId = deps.newRequestId ?? (() => crypto.randomUUID());
  const randomHex = (bytes: number) => hexOf(crypto.getRandomValues(new Uint8Array(bytes)));
  const tracing = deps.tracing ?? propagationOnly(new TraceIds(randomHex));
  const tracedRequest = (c: Context): TracedRequest => {
    const url = new URL(c.req.url);
    return {
      method: c.req.method,
      host: url.host,
      path: url.pathname,
      scheme: deps.clientProto?.(c) ?? (url.protocol === "https:" ? "https" : "http"),
      protocol: deps.clientProtocol?.(c),
      client: deps.clientAddress?.(c),
    };
  };
  const requestHeaders =
    deps.requestHeaders ?? ((c: Context) => ({ get: (name: string) => c.req.header(name) }));

  const app = new Hono();
  // The router's own endpoints are no traffic: they count in no request series (core/metrics.ts).
  registerAdmin(app, {
    source: routing.source,
    expired: () => routing.source.expired(),
    adminToken: deps.config.adminToken,
    routesOf: routing.routesOf,
    select: routing.select,
    balancer: policy.balancer,
    ejection: policy.ejection,
    metrics,
    snapshotAgeSeconds: routing.snapshotAgeSeconds,
    steering: routing.steering,
    backendSeries: deps.config.metricsBackends ?? "service",
    yieldToLoop: deps.yieldToLoop ?? nextTimerTurn,
    endpoints: deps.endpoints === "public" ? "public" : "all",
    history: deps.trafficHistory ?? new TrafficHistory(),
    ...(deps.processFamilies ? { processFamilies: deps.processFamilies } : {}),
  });
  if (deps.endpoints === "admin") {
    app.all("*", (c) => c.json({ error: "no_route" }, 404));
    return app;
  }

  // node/direct-requests.ts is this handler on Node's objects (the Node router's plain requests never reach
  // Hono): a change here is a change there.
  app.all("*", async (c) => {
    const traced = tracing.enabled
      ? tracing.start(tracedRequest(c), (name) => requestHeaders(c).get(name))
      : tracing.untraced;
    const observation = new RequestObservation(
      requestIdOf(incomingRequestId(c), newRequestId),
      c.req.method,
      performance.now(),
      accessLog?.sampled() === true,
      traced.span,
    );
    // gRPC calls are POSTs: other methods need no header read.
    if (c.req.method === "POST") observation.grpc = isGrpcRequest(requestHeaders(c).get("content-type"));
    const proto = deps.clientProto?.(c);
    const trustedPeer = deps.clientTrusted?.(c) === true;
    // Behind a balancer that ended TLS, redirects keep the scheme the client used.
    const schemeUsed =
      proto && trustedPeer ? forwardedProto(c.req.header("x-forwarded-proto"), proto) : proto;
    const routed = await routing.route(c.req.url, {
      method: c.req.method,
      headers: requestHeaders(c),
      ...(schemeUsed ? { proto: schemeUsed } : {}),
      serverName: deps.clientServerName?.(c),
      listenerPort: deps.clientListenerPort?.(c),
      client: deps.clientLocation?.(c),
    });
    if (typeof routed === "string") return answer(routed, observation, c);
    if ("redirect" in routed) {
      const { status, location } = routed.redirect;
      return routerMade(status, [["location", location]], observation, c);
    }
    if ("preflight" in routed) return routerMade(200, routed.preflight, observation, c);
    observation.routed(metrics, routed.selection);
    if ("error" in routed) return answer(routed.error, observation, c);
    const forwarding: ForwardingInfo = {
      clientIp: deps.clientAddress?.(c),
      trustedPeer,
      trace: traced.fields,
      proto: proto ?? routed.target.proto,
      host: routed.target.authority,
      requestId: observation.requestId,
      upstreamHost: routed.upstreamHost,
      modifier: routed.plan.requestHeaders,
    };
    const logEnd = observation.logged
      ? () => logLine(observation, c, forwarding.host, routed.target.path)
      : undefined;
    const responseHeaders = routed.plan.responseHeaders;
    const ruleDeps = withRulePolicy(proxyDeps, routed.plan);
    if (routed.mirrors.length > 0) {
      const raw = c.req.raw;
      const copies = sendWebMirrors(deps.upstream, routed.mirrors, {
        method: raw.method,
        path: routed.upstreamPath,
        headers: upstreamRequestHeaders(raw.headers, forwarding),
        hasBody: raw.body !== null,
      });
      if (copies) keepRunning(c, copies);
    }
    const forwarded = nativeProxy?.forward(
      c.env,
      {
        selection: routed.selection,
        path: routed.upstreamPath,
        responseHeaders,
        forwarding,
        observation,
        logEnd,
      },
      ruleDeps,
    );
    if (nativeProxy && forwarded) {
      const result = await forwarded;
      // A backend's answer was counted where its head went out (node/proxy.ts).
      if (!result.ok) return answer(result.error, observation, c);
      return nativeProxy.alreadySent;
    }
    // The web path: reading these makes the adapter build a web Request (Node), or is the request (Workers).
    const raw = c.req.raw;
    // A WebSocket handshake passes through where the transport carries it (Workers' fetch); on Node the
    // server's 'upgrade' listener takes upgrades before they reach the app (node/upgrade.ts).
    const upgrade = deps.upstream.webSockets === true && isWebSocketUpgrade(raw.headers);
    const result = await proxy(
      routed.selection,
      {
        method: raw.method,
        path: routed.upstreamPath,
        responseHeaders,
        headers: upgrade
          ? upstreamUpgradeHeaders(raw.headers, forwarding)
          : upstreamRequestHeaders(raw.headers, forwarding),
        body: raw.body,
        signal: raw.signal,
        upgrade,
        observation,
      },
      ruleDeps,
    );
    if (!result.ok) return answer(result.error, observation, c);
    // Counted where the backend's head came in (web-proxy.ts). The body streams after this returns: the line
    // is written now, without bytes.
    observation.bytesCounted = false;
    logEnd?.();
    return result.value;
  });

  /** A RequestRedirect (its Location) or a CORS preflight (core/cors.ts), answered by the router: no body. */
  function routerMade(
    status: number,
    fields: readonly (readonly [string, string])[],
    observation: RequestObservation,
    c: Context,
  ): Response {
    observation.respond(metrics, status, performance.now(), false);
    observation.bytes = 0;
    logLine(observation, c, undefined, undefined);
    const headers = new Headers(fields.map(([name, value]): [string, string] => [name, value]));
    headers.set(REQUEST_ID_HEADER, observation.requestId);
    return new Response(null, { status, headers });
  }

  function answer(error: RouterError, observation: RequestObservation, c: Context): Response {
    const routerAnswer = observation.routerAnswer(metrics, error, performance.now());
    const head = c.req.method === "HEAD";
    if (head) observation.bytes = 0;
    logLine(observation, c, undefined, undefined);
    if (nativeProxy?.answer?.(c.env, routerAnswer)) return nativeProxy.alreadySent;
    const { status, headers, body } = head ? headAnswer(routerAnswer) : routerAnswer;
    const fields = headers.map(([name, value]): [string, string] => [name, value]);
    return new Response(head ? null : body, { status, headers: fields });
  }

  /** The access log line (once per request); host and path as routed, else as the runtime's URL has them. */
  function logLine(
    observation: RequestObservation,
    c: Context,
    host: string | undefined,
    path: string | undefined,
  ): void {
    if (!observation.takeLogLine()) return;
    let url: URL | undefined;
    if (host === undefined || path === undefined) {
      url = URL.canParse(c.req.url) ? new URL(c.req.url) : undefined;
    }
    accessLog?.write(
      observation.entry(performance.now(), Date.now(), {
        client: loggedClient(
          deps.clientAddress?.(c),
          deps.clientTrusted?.(c) === true,
          () => c.req.header("x-forwarded-for"),
          deps.config.trustedProxies ?? NO_TRUSTED_PROXIES,
        ),
        host: host ?? url?.host ?? "",
        path: path ?? (url ? `${url.pathname}${url.search}` : ""),
        protocol: deps.clientProtocol?.(c),
      }),
    );
  }

  return app;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { NativeRoute } from "../app/native-proxy.js";
import type { AccessLog } from "../core/access-log.js";
import type { RouterError } from "../core/errors.js";
import { isGrpcRequest } from "../core/grpc-errors.js";
import type { ForwardingInfo } from "../core/headers.js";
import type { ProxyResult } from "../core/proxy-policy.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../core/request-id.js";
import { RequestObservation } from "../core/request-observation.js";
import { ADMIN_PREFIX } from "../core/request-target.js";
import type { Routing, RoutingOutcome } from "../core/routing.js";
import { withRulePolicy } from "../core/rule-policy.js";
import type { RequestTraceStart, RequestTracing } from "../core/tracing.js";
import {
  forwardedProto,
  loggedClient,
  NO_TRUSTED_PROXIES,
  type TrustedProxies,
} from "../core/trusted-proxies.js";
import { clientListenerPort, clientServerName } from "./client-tls.js";
import { type ConnectionFacts, connectionFactsOf } from "./connection-facts.js";
import { drainUnreadBody } from "./drain.js";
import { sendNodeMirrors } from "./mirror-requests.js";
import { Exchange, type ExchangeEnd, type NodeProxyTransport } from "./proxy.js";
import type { RequestHead } from "./request-head.js";

/**
 * Proxied requests straight from Node's request listener, without the Hono app, so the common request builds
 * no web Request, Context or Response (per request, those cost the router more CPU than routing and proxying
 * it). This is the app's catch-all (app/app.ts) on Node's objects, for exactly the requests whose URL the
 * adapter (@hono/node-server) builds without the URL parser: origin-form, a Host of lowercase letters, digits, `._-`
 * and a port, a target of the characters it accepts as they are and no dot segment. Everything else (HEAD,
 * absolute-form, anything under the admin prefix, a Host or target the parser would rewrite, no Host) goes
 * to the app, so both paths route the same URL and answer the same way.
 */

/** @hono/node-server's checks (src/request.ts) for a URL it builds by concatenation. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

export interface DirectRequestDeps {
  readonly routing: Routing;
  readonly transport: NodeProxyTransport;
  readonly accessLog: AccessLog | undefined;
  readonly newRequestId: () => string;
  /** TRUSTED_PROXIES: whose forwarding fields are kept (node/connection-facts.ts); default nobody's. */
  readonly trustedProxies?: TrustedProxies;
  /** Spans and W3C trace context (core/tracing.ts); absent, traceparent passes as any field. */
  readonly tracing?: RequestTracing;
}

/**
 * A request listener that takes the requests it can proxy directly (true) and leaves the rest (false); `head`
 * is the request's head as the server read it, already found acceptable (request-head.ts).
 */
export function createDirectRequests(
  deps: DirectRequestDeps,
): (incoming: IncomingMessage, outgoing: ServerResponse, head: RequestHead) => boolean {
  return (incoming, outgoing, head) => {
    const target = incoming.url;
    if (incoming.method === "HEAD" || target === undefined || target.startsWith(ADMIN_PREFIX)) return false;
    if (!PLAIN_TARGET.test(target) || DOT_SEGMENT.test(target)) return false;
    const host = head.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    new DirectRequest(deps, incoming, outgoing, head, target).run();
    return true;
  };
}

/** One request on the direct path: the app's catch-all, as an object rather than closures per request. */
class DirectRequest implements ExchangeEnd {
  readonly #deps: DirectRequestDeps;
  readonly #incoming: IncomingMessage;
  readonly #outgoing: ServerResponse;
  readonly #head: RequestHead;
  readonly #url: string;
  readonly #proto: "http" | "https";
  readonly #observation: RequestObservation;
  readonly #facts: ConnectionFacts;
  readonly #trace: RequestTraceStart | undefined;

  constructor(
    deps: DirectRequestDeps,
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    head: RequestHead,
    target: string,
  ) {
    this.#deps = deps;
    this.#incoming = incoming;
    this.#outgoing = outgoing;
    this.#head = head;
    this.#proto = (incoming.socket as Partial<TLSSocket>).encrypted ? "https" : "http";
    this.#facts = connectionFactsOf(incoming.socket, deps.trustedProxies);
    this.#url = `${this.#proto}://${head.host}${target}`;
    const method = incoming.method ?? "GET";
    const tracing = deps.tracing;
    this.#trace = tracing?.enabled
      ? tracing.start(
          {
            method,
            host: head.host ?? "",
            path: target,
            scheme: this.#proto,
            protocol: incoming.httpVersion,
            client: this.#facts.clientIp,
          },
          (name) => head.get(name),
        )
      : tracing?.untraced;
    this.#observation = new RequestObservation(
      requestIdOf(head.requestId, deps.newRequestId),
      method,
      performance.now(),
      deps.accessLog?.sampled() === true,
      this.#trace?.span,
    );
    // gRPC calls are POSTs: other methods need no header read (core/grpc-errors.ts).
    if (incoming.method === "POST") this.#observation.grpc = isGrpcRequest(head.get("content-type"));
  }

  /** Serves the request; no promise on the way unless the source's snapshot or the backend is awaited. */
  run(): void {
    try {
      const { routing } = this.#deps;
      const method = this.#observation.method;
      // The adapter's clean-up of a body nobody read (it drains it, bounded, once the response closed).
      if (method !== "GET") this.#outgoing.once("close", () => drainUnreadBody(this.#incoming));
      const routed = routing.routeNow(this.#url, {
        method,
        headers: this.#head,
        // Behind a balancer that ended TLS, redirects keep the scheme the client used.
        proto: this.#facts.trustedPeer
          ? forwardedProto(this.#head.get("x-forwarded-proto") ?? undefined, this.#proto)
          : this.#proto,
        serverName: this.#proto === "https" ? clientServerName(this.#incoming.socket) : undefined,
        listenerPort: clientListenerPort(this.#incoming.socket),
      });
      if (routed instanceof Promise) {
        // A throw while serving the routed request is answered too, as on the synchronous path.
        routed.then((outcome) => this.#serve(outcome)).catch((error: unknown) => this.failed(error));
      } else this.#serve(routed);
    } catch (error) {
      this.failed(error);
    }
  }

  /** ExchangeEnd: a backend's answer was counted where its head went out (proxy.ts); an error is ours to answer. */
  ended(result: ProxyResult<number>): void {
    if (!result.ok) this.#answer(result.error);
  }

  /** ExchangeEnd, and any exception on the way: Hono's default answer, or a cut once the head went out. */
  failed(error: unknown): void {
    failed(this.#outgoing, error);
  }

  #serve(routed: RoutingOutcome): void {
    const { routing } = this.#deps;
    const { metrics } = routing.policy;
    const incoming = this.#incoming;
    const outgoing = this.#outgoing;
    const observation = this.#observation;
    if (typeof routed === "string") {
      this.#answer(routed);
      return;
    }
    if ("redirect" in routed) {
      const { status, location } = routed.redirect;
      observation.respond(metrics, status, performance.now(), false);
      observation.bytes = 0;
      this.logLine(undefined, undefined);
      outgoing.writeHead(status, { location, [REQUEST_ID_HEADER]: observation.requestId });
      outgoing.end();
      return;
    }
    if ("preflight" in routed) {
      // A CORS preflight the route answers itself (core/cors.ts): 200, no body.
      observation.respond(metrics, 200, performance.now(), false);
      observation.bytes = 0;
      this.logLine(undefined, undefined);
      const fields = [...routed.preflight, [REQUEST_ID_HEADER, observation.requestId]].flat();
      outgoing.writeHead(200, fields as string[]);
      outgoing.end();
      return;
    }
    observation.routed(metrics, routed.selection);
    if ("error" in routed) {
      this.#answer(routed.error);
      return;
    }
    const forwarding: ForwardingInfo = {
      clientIp: this.#facts.clientIp,
      trustedPeer: this.#facts.trustedPeer,
      trace: this.#trace?.fields,
      proto: this.#proto,
      host: routed.target.authority,
      requestId: observation.requestId,
      upstreamHost: routed.upstreamHost,
      modifier: routed.plan.requestHeaders,
      connection: this.#head.connection ?? null,
    };
    const route: NativeRoute = {
      selection: routed.selection,
      path: routed.upstreamPath,
      responseHeaders: routed.plan.responseHeaders,
      forwarding,
      observation,
      logEnd: observation.logged ? () => this.logLine(forwarding.host, routed.target.path) : undefined,
    };
    const deps = withRulePolicy(routing.policy, routed.plan);
    sendNodeMirrors(routed.mirrors, incoming, routed.upstreamPath, forwarding);
    new Exchange(this.#deps.transport, incoming, outgoing, route, deps, this).run();
  }

  /** The access log line (once per request); host and path as routed, else as the URL has them. */
  logLine(routedHost: string | undefined, path: string | undefined): void {
    const observation = this.#observation;
    if (!observation.takeLogLine()) return;
    const parsed = routedHost === undefined || path === undefined ? new URL(this.#url) : undefined;
    this.#deps.accessLog?.write(
      observation.entry(performance.now(), Date.now(), {
        client: loggedClient(
          this.#facts.clientIp,
          this.#facts.trustedPeer,
          () => this.#head.get("x-forwarded-for"),
          this.#deps.trustedProxies ?? NO_TRUSTED_PROXIES,
        ),
        host: routedHost ?? parsed?.host ?? "",
        path: path ?? (parsed ? `${parsed.pathname}${parsed.search}` : ""),
        protocol: this.#incoming.httpVersion,
      }),
    );
  }

  #answer(error: RouterError): void {
    writeErrorAnswer(this.#outgoing, error, this.#observation, this.#deps.routing.policy.metrics);
    this.logLine(undefined, undefined);
  }
}

/**
 * The router's own answer, as the app's Response reaches the client through the adapter: the fields of a web
 * Headers (sorted, lowercase) and a Content-Length.
 */
function writeErrorAnswer(
  outgoing: ServerResponse,
  error: RouterError,
  observation: RequestObservation,
  metrics: Routing["policy"]["metrics"],
): void {
  const { status, headers, body } = observation.routerAnswer(metrics, error, performance.now());
  if (outgoing.headersSent || outgoing.destroyed) return;
  const head: Record<string, string | number> = {};
  for (const [name, value] of [...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    head[name] = value;
  }
  head["Content-Length"] = Buffer.byteLength(body);
  outgoing.writeHead(status, head);
  outgoing.end(body);
}

/** What Hono's default error handler answers for an exception (500, text), or a cut once the head went out. */
function failed(outgoing: ServerResponse, error: unknown): void {
  console.error(error);
  if (outgoing.headersSent) {
    outgoing.destroy(error instanceof Error ? error : undefined);
    return;
  }
  const body = "Internal Server Error";
  // The reason given: a writeHead that threw (a field value Node refuses) left its own reason phrase behind.
  outgoing.writeHead(500, body, {
    "content-type": "text/plain; charset=UTF-8",
    "Content-Length": body.length,
  });
  outgoing.end(body);
}

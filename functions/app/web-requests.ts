import type { Context } from "hono";
import type { PolicyDeps } from "../core/forwarding/proxy-policy.js";
import type { ErrorAnswer } from "../core/http/errors.js";
import { isWebSocketUpgrade, upstreamRequestHeaders, upstreamUpgradeHeaders } from "../core/http/headers.js";
import { REQUEST_ID_HEADER } from "../core/http/request-id.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { RoutingRequest } from "../core/routing.js";
import type { ClientLocation } from "../core/steering/origin.js";
import type { Upstream } from "../transports/upstream.js";
import { keepRunning, sendWebMirrors } from "./mirror-requests.js";
import type { PipelineOutput, PipelineRequest, PipelineRun, ProxyRoute } from "./request-pipeline.js";
import { proxy } from "./web-proxy.js";

/** What the runtime tells of a request that Hono's Context does not (Workers' `request.cf`, the client's IP). */
export interface WebRequestReaders {
  readonly clientAddress?: (c: Context) => string | undefined;
  /** The client is a trusted proxy (TRUSTED_PROXIES): its forwarding fields are kept; default false. */
  readonly clientTrusted?: (c: Context) => boolean;
  readonly clientProto?: (c: Context) => "http" | "https";
  readonly clientServerName?: (c: Context) => string | undefined;
  readonly clientListenerPort?: (c: Context) => number | undefined;
  readonly clientProtocol?: (c: Context) => string | undefined;
  readonly clientLocation?: (c: Context) => ClientLocation | undefined;
}

/** A web request (Hono's Context) as the request pipeline reads it. */
export class WebRequest implements PipelineRequest {
  readonly c: Context;
  readonly method: string;
  readonly url: string;
  readonly headers: RoutingRequest["headers"];
  readonly requestId: string | undefined;
  readonly proto: "http" | "https" | undefined;
  readonly serverName: string | undefined;
  readonly listenerPort: number | undefined;
  readonly clientIp: string | undefined;
  readonly trustedPeer: boolean;
  readonly clientLocation: ClientLocation | undefined;
  readonly protocol: string | undefined;

  constructor(c: Context, readers: WebRequestReaders) {
    this.c = c;
    this.method = c.req.method;
    this.url = c.req.url;
    this.headers = { get: (name) => c.req.header(name) ?? null };
    this.requestId = c.req.header(REQUEST_ID_HEADER);
    this.proto = readers.clientProto?.(c);
    this.serverName = readers.clientServerName?.(c);
    this.listenerPort = readers.clientListenerPort?.(c);
    this.clientIp = readers.clientAddress?.(c);
    this.trustedPeer = readers.clientTrusted?.(c) === true;
    this.clientLocation = readers.clientLocation?.(c);
    this.protocol = readers.clientProtocol?.(c);
  }
}

type WebRun = PipelineRun<WebRequest, Response | Promise<Response>>;

/**
 * The web path's output (Workers, and a web transport in tests): answers as web Responses, mirrors and
 * forwards through the runtime's Upstream (fetch; a Workers VPC binding in production) with web-proxy.ts.
 */
export class WebOutput implements PipelineOutput<WebRequest, Response | Promise<Response>> {
  readonly #upstream: Upstream;

  constructor(upstream: Upstream) {
    this.#upstream = upstream;
  }

  answer(_run: WebRun, { status, headers, body }: ErrorAnswer): Response {
    const fields = headers.map(([name, value]): [string, string] => [name, value]);
    return new Response(body === "" ? null : body, { status, headers: fields });
  }

  mirror(run: WebRun, mirrors: readonly MirrorTarget[], route: ProxyRoute): void {
    const raw = run.request.c.req.raw;
    const copies = sendWebMirrors(this.#upstream, mirrors, {
      method: raw.method,
      path: route.path,
      headers: upstreamRequestHeaders(raw.headers, route.forwarding),
      hasBody: raw.body !== null,
    });
    if (copies) keepRunning(run.request.c, copies);
  }

  async forward(run: WebRun, route: ProxyRoute, deps: PolicyDeps): Promise<Response> {
    const raw = run.request.c.req.raw;
    // A WebSocket handshake passes through where the transport carries it (Workers' fetch).
    const upgrade = this.#upstream.webSockets === true && isWebSocketUpgrade(raw.headers);
    const result = await proxy(
      route.selection,
      {
        method: raw.method,
        path: route.path,
        responseHeaders: route.responseHeaders,
        headers: upgrade
          ? upstreamUpgradeHeaders(raw.headers, route.forwarding)
          : upstreamRequestHeaders(raw.headers, route.forwarding),
        body: raw.body,
        signal: raw.signal,
        upgrade,
        observation: route.observation,
      },
      { ...deps, upstream: this.#upstream },
    );
    if (!result.ok) return run.fail(result.error);
    // Counted where the backend's head came in (web-proxy.ts). The body streams after this returns: the line
    // is written now, without bytes.
    route.observation.bytesCounted = false;
    route.logEnd?.();
    return result.value;
  }
}

import type { IncomingMessage } from "node:http";
import { type Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { HttpBindings } from "@hono/node-server";
import type { RequestContent } from "../../../lib/http1/request-content.js";
import { requestContentOf } from "../../../lib/http1/request-content.js";
import type { NativeProxy, NativeRoute } from "../../app/native-proxy.js";
import { upstreamRequestHeaderList } from "../../core/headers.js";
import type { PolicyDeps, ProxyResult } from "../../core/proxy-policy.js";
import { Exchange, type ExchangeEnd, type NodeProxyTransport, type UpstreamRequest } from "../proxy.js";

/**
 * The Node proxy with HTTP/2 clients' requests (other than HEAD, which the web path answers as for HTTP/1.1)
 * taken natively to HTTP/1.1 backends: the same Exchange and BackendAttempt as an HTTP/1.1 request (retries,
 * timers, back-pressure, the client's close cutting the attempt), the head written for HTTP/2
 * (client-response.ts); everything else as `native` does it.
 */
export function withH2ToH1(native: NativeProxy, transport: NodeProxyTransport): NativeProxy {
  return {
    ...native,
    forward(env, route, deps) {
      const bindings = env as Partial<HttpBindings> | undefined;
      const outgoing = bindings?.outgoing as unknown;
      const request = bindings?.incoming as unknown as Http2ServerRequest | undefined;
      if (outgoing instanceof Http2ServerResponse && request && request.method !== "HEAD") {
        return proxyH2ToH1OnNode(transport, request, outgoing, route, deps);
      }
      return native.forward(env, route, deps);
    },
  };
}

/** Proxies an HTTP/2 client's request to HTTP/1.1 backends; resolves as proxyOnNode does (proxy.ts). */
export function proxyH2ToH1OnNode(
  transport: NodeProxyTransport,
  request: Http2ServerRequest,
  outgoing: Http2ServerResponse,
  route: NativeRoute,
  deps: PolicyDeps,
): Promise<ProxyResult<number>> {
  return new Promise((ended, failed) => {
    const end: ExchangeEnd = {
      // Told once the stream closed, not when the head went out (as h2-exchange.ts): @hono/node-server
      // destroys an HTTP/2 request whose body has not ended once its handler returned, which would cut an
      // upload still streaming next to its answer.
      ended(result) {
        const stream = outgoing.stream;
        if (!result.ok || stream.closed || stream.destroyed) ended(result);
        else outgoing.once("close", () => ended(result));
      },
      failed,
    };
    // RequestBody reads the events and flow control an Http2ServerRequest shares with IncomingMessage.
    const incoming = request as unknown as IncomingMessage;
    const exchange = new Exchange(
      transport,
      incoming,
      outgoing,
      route,
      deps,
      end,
      h2UpstreamRequest(request, route),
    );
    // A stream the client reset while the request was routed closed before the exchange listened for it.
    if (outgoing.stream.closed || outgoing.stream.destroyed) exchange.clientLeft();
    exchange.run();
  });
}

/** A request with content whose length was not declared: sent chunked (RFC 9113 §8.2.2 has no framing fields). */
const UNDECLARED: RequestContent = { length: undefined, transferCodings: undefined };

/**
 * An HTTP/2 request as an HTTP/1.1 one: its fields without the pseudo-header fields (Host comes from
 * :authority through the route's forwarding info, RFC 9113 §8.3.1), Cookie fields joined into one by "; "
 * (§8.2.3); content unless its HEADERS ended the stream (§8.1), framed by its Content-Length or chunked.
 */
export function h2UpstreamRequest(request: Http2ServerRequest, route: NativeRoute): UpstreamRequest {
  const fields = http1FieldsOf(request.rawHeaders);
  let content: RequestContent | undefined;
  let framingRefused = false;
  try {
    const declared = requestContentOf(fields);
    if (request.stream.endAfterHeaders) content = declared?.length === 0 ? declared : undefined;
    else content = declared ?? UNDECLARED;
  } catch {
    framingRefused = true;
  }
  return {
    method: request.method,
    headers: upstreamRequestHeaderList(fields, route.forwarding),
    content,
    framingRefused,
    // HTTP/2 has no transfer codings (RFC 9113 §8.2.2): a transfer-coded answer cannot be relayed.
    clientSpeaks11: false,
  };
}

/** `rawHeaders` of an HTTP/2 request as HTTP/1.1 fields: no pseudo-header field, one Cookie. */
export function http1FieldsOf(rawHeaders: readonly string[]): string[] {
  const out: string[] = [];
  let cookie: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    if (name.startsWith(":")) continue;
    if (name.length === 6 && name.toLowerCase() === "cookie") {
      cookie = cookie === undefined ? value : `${cookie}; ${value}`;
    } else out.push(name, value);
  }
  if (cookie !== undefined) out.push("cookie", cookie);
  return out;
}

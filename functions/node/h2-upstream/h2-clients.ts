import type { Http2ServerRequest } from "node:http2";
import { Http2ServerResponse } from "node:http2";
import type { HttpBindings } from "@hono/node-server";
import type { NativeProxy } from "../../app/native-proxy.js";
import type { ErrorAnswer } from "../../core/errors.js";
import { isGrpcAnswer } from "../../core/grpc-errors.js";
import type { NodeProxyTransport } from "../proxy.js";
import { proxyH2OnNode, selectsH2c } from "./h2-exchange.js";

/**
 * The Node proxy with HTTP/2 clients' requests to h2c backends taken natively (h2-exchange.ts: streams both
 * ways, trailers relayed), and the router's gRPC errors to HTTP/2 clients written as Trailers-Only responses;
 * everything else as `native` does it.
 */
export function withH2Clients(native: NativeProxy, transport: NodeProxyTransport): NativeProxy {
  return {
    alreadySent: native.alreadySent,
    forward(env, route, deps) {
      const bindings = env as Partial<HttpBindings> | undefined;
      const outgoing = bindings?.outgoing as unknown;
      if (outgoing instanceof Http2ServerResponse && selectsH2c(route)) {
        const incoming = bindings?.incoming as unknown as Http2ServerRequest;
        if (incoming.method !== "HEAD") return proxyH2OnNode(transport, incoming, outgoing, route, deps);
      }
      return native.forward(env, route, deps);
    },
    answer: (env, answer) => writeGrpcAnswer(env, answer) || (native.answer?.(env, answer) ?? false),
  };
}

/**
 * A router-made gRPC error to an HTTP/2 client as a Trailers-Only response: one HEADERS frame that ends the
 * stream (gRPC PROTOCOL-HTTP2.md). Node's compatibility response would send the head and then an empty DATA
 * frame, which gRPC clients read as a call that ended without a status (INTERNAL). True when written.
 */
export function writeGrpcAnswer(env: unknown, answer: ErrorAnswer): boolean {
  const outgoing = (env as Partial<HttpBindings> | undefined)?.outgoing as unknown;
  if (!(outgoing instanceof Http2ServerResponse) || !isGrpcAnswer(answer)) return false;
  const stream = outgoing.stream;
  if (outgoing.headersSent || stream.destroyed || stream.closed) return false;
  const headers: Record<string, string | number> = { ":status": answer.status };
  for (const [name, value] of answer.headers) headers[name] = value;
  stream.respond(headers, { endStream: true });
  return true;
}

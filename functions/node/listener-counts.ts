import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Socket } from "node:net";
import type { ListenerGauges, ListenerName } from "../core/listener-gauges.js";
import type { ConnectionStage } from "./proxy-header-stage.js";

/**
 * The listener gauges' counting (core/listener-gauges.ts): a connection stage that counts each accepted
 * connection until it closes, run first on each listener (before a PROXY header is read, so a refused
 * connection counted while it was open), and a wrapper of the HTTP/2 request handler that counts streams.
 */
export function countingStage(
  gauges: ListenerGauges,
  listener: ListenerName,
  then?: ConnectionStage,
): ConnectionStage {
  const closed = () => {
    gauges.connections[listener]--;
  };
  return (socket: Socket, next) => {
    gauges.connections[listener]++;
    socket.once("close", closed);
    if (then) then(socket, next);
    else next(socket);
  };
}

type Http2Handler = (request: Http2ServerRequest, response: Http2ServerResponse) => void;

export function countingStreams(gauges: ListenerGauges, handler: Http2Handler): Http2Handler {
  const closed = { http: () => void gauges.streams.http--, https: () => void gauges.streams.https-- };
  return (request, response) => {
    const listener: ListenerName = (request.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
    gauges.streams[listener]++;
    request.stream.once("close", closed[listener]);
    handler(request, response);
  };
}

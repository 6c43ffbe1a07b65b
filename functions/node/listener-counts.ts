import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { ListenerGauges, ListenerName } from "../core/observability/listener-gauges.js";
import type { ConnectionStage } from "./proxy-header-stage.js";

/**
 * The listener gauges' counting (core/observability/listener-gauges.ts): a connection stage that counts each accepted
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

type Http2Handler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  raw: string[],
) => void;

export function countingStreams(gauges: ListenerGauges, handler: Http2Handler): Http2Handler {
  const closed = { http: () => void gauges.streams.http--, https: () => void gauges.streams.https-- };
  return (stream, headers, flags, raw) => {
    const listener: ListenerName = (stream.session?.socket as { encrypted?: boolean } | undefined)?.encrypted
      ? "https"
      : "http";
    gauges.streams[listener]++;
    stream.on("close", closed[listener]);
    handler(stream, headers, flags, raw);
  };
}

import type { Socket } from "node:net";
import type { ServerStream } from "../../lib/http2/server-session.js";
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

type Http2Handler = (stream: ServerStream, socket: Socket) => void;

/** The HTTP/2 front's hooks (http2-front.ts): a request handed out, and one of those closed. */
export interface Http2StreamHooks {
  readonly onStream: Http2Handler;
  readonly onStreamClosed: (socket: Socket) => void;
}

const listenerOf = (socket: Socket): ListenerName =>
  (socket as { encrypted?: boolean }).encrypted ? "https" : "http";

export function countingStreams(gauges: ListenerGauges, handler: Http2Handler): Http2StreamHooks {
  return {
    onStream(stream, socket) {
      gauges.streams[listenerOf(socket)]++;
      handler(stream, socket);
    },
    onStreamClosed(socket) {
      gauges.streams[listenerOf(socket)]--;
    },
  };
}

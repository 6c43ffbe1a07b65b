import type { Server } from "node:http";
import type { Logger } from "../../../lib/logger.js";
import type { RouterConfig } from "../../core/config.js";
import type { RouterMetrics } from "../../core/metrics.js";
import { countingStreams } from "../listener-counts.js";
import { splitCleartext } from "./cleartext-split.js";
import { createHttp2Front, type Http2Front } from "./http2-front.js";
import type { Http2Limits } from "./http2-limits.js";
import { createHttp2Requests, type Http2RequestDeps } from "./http2-requests.js";

export interface RouterHttp2Options extends Omit<Http2RequestDeps, "countRefusal"> {
  /** The router's HTTP/1.1 server on PORT: its connections that open with the HTTP/2 preface come here. */
  readonly server: Server;
  readonly drainMs: number;
  /**
   * An HTTP/2 session with no open stream for the keep-alive timeout is closed; a new connection that has not
   * told its protocol within the headers timeout is closed (the HTTP/1.1 bounds).
   */
  readonly config: Pick<RouterConfig, "clientKeepAliveTimeoutMs" | "clientHeadersTimeoutMs">;
  /** Refusals before routing count in the unrouted series, as HTTP/1.1's do. */
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly limits?: Partial<Http2Limits>;
}

export interface RouterHttp2 {
  /** For the HTTPS listener's ALPN h2 connections. */
  readonly front: Http2Front;
  /** GOAWAY to every session, streams finish for up to drainMs, then cut. */
  close(): Promise<void>;
}

/** HTTP/2 for the Node router: h2c prior knowledge on PORT, and the front the HTTPS listener hands h2 to. */
export function serveHttp2(options: RouterHttp2Options): RouterHttp2 {
  const { metrics, config } = options;
  const front = createHttp2Front({
    onRequest: countingStreams(
      metrics.listeners,
      createHttp2Requests({
        ...options,
        countRefusal: (method, status) => metrics.respond(metrics.red.unrouted, method, status, 0),
      }),
    ),
    drainMs: options.drainMs,
    idleTimeoutMs: config.clientKeepAliveTimeoutMs,
    logger: options.logger,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const split = splitCleartext(options.server, front, config.clientHeadersTimeoutMs);
  return {
    front,
    close() {
      split.destroyUndecided();
      return front.close();
    },
  };
}

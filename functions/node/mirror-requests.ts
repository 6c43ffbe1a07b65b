import type { IncomingMessage } from "node:http";
import { request } from "node:http";
import { type ForwardingInfo, upstreamRequestHeaderList } from "../core/headers.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";

/** A copy that has not been answered by then is dropped. */
const MIRROR_TIMEOUT_MS = 10_000;

/**
 * Sends the copies of a request without a body (HTTPRequestMirrorFilter) with the headers the request itself
 * is sent with, and forgets them: the answers are read away, and failures are nobody's concern but the
 * mirror's. A request with a body is not mirrored: its body streams to the backend once.
 */
export function sendNodeMirrors(
  mirrors: readonly MirrorTarget[],
  incoming: IncomingMessage,
  path: string,
  forwarding: ForwardingInfo,
): void {
  if (mirrors.length === 0 || hasBody(incoming)) return;
  const headers = upstreamRequestHeaderList(incoming.rawHeaders, forwarding);
  for (const mirror of mirrors) {
    const copy = request({
      host: mirror.ip,
      port: mirror.port,
      method: incoming.method,
      path,
      headers,
      timeout: MIRROR_TIMEOUT_MS,
      agent: false,
    });
    copy.on("response", (response) => response.resume());
    copy.on("timeout", () => copy.destroy());
    copy.on("error", () => {});
    copy.end();
  }
}

function hasBody(incoming: IncomingMessage): boolean {
  const length = incoming.headers["content-length"];
  return incoming.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

import type { ExchangeHandler, OutgoingRequest, RequestControl } from "../../lib/http-exchange.js";
import type { ProxyRoute } from "../app/request-pipeline.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { ClientSide } from "./clients/client-side.js";
import type { Dispatchers } from "./dispatchers.js";

/** A copy that has not been answered by then is dropped. */
const MIRROR_TIMEOUT_MS = 10_000;

/**
 * Sends the copies of a request without a body (HTTPRequestMirrorFilter) over the same dispatchers and pools as
 * the request, with the fields the request itself is sent with, and forgets them: their answers are read away,
 * and failures are nobody's concern but the mirror's. A request with a body is not mirrored: its body streams to
 * the backend once.
 */
export function sendMirrors(
  dispatchers: Dispatchers,
  mirrors: readonly MirrorTarget[],
  client: ClientSide,
  route: ProxyRoute,
): void {
  const content = client.content();
  if (content !== undefined && (typeof content === "string" || content.length !== 0)) return;
  const request: OutgoingRequest = {
    method: client.method,
    path: route.path,
    headers: client.upstreamFields(route.forwarding),
    body: null,
    contentLength: undefined,
    transferCodings: undefined,
  };
  // A copy to a port with a BackendTLSPolicy goes over TLS as the request would (https-dispatcher.ts).
  for (const mirror of mirrors)
    dispatchers.for(mirror, false)?.dispatch(mirror, request, new ForgottenCopy());
}

/** A copy's answer, read away; the copy is cut when it outlives MIRROR_TIMEOUT_MS. */
class ForgottenCopy implements ExchangeHandler {
  #timer: NodeJS.Timeout | undefined;

  onStart(control: RequestControl): void {
    this.#timer = setTimeout(() => control.abort(new Error("mirror copy timed out")), MIRROR_TIMEOUT_MS);
    this.#timer.unref();
  }
  onHead(): void {}
  onData(): boolean {
    return true;
  }
  /** Its chunks are dropped as they come: the read buffer is free again at once. */
  holdsChunk(): boolean {
    return false;
  }
  onComplete(): void {
    clearTimeout(this.#timer);
  }
  onError(): void {
    clearTimeout(this.#timer);
  }
}

import type { ExchangeHandler, OutgoingRequest, RequestControl } from "../../lib/http-exchange.js";
import type { ProxyRoute } from "../app/request-pipeline.js";
import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { ClientSide } from "./clients/client-side.js";
import type { Dispatchers } from "./dispatchers.js";

/** A copy that has not been answered by then is dropped. */
const TIMEOUT_MS = 10_000;

/**
 * Sends the copies (HTTPRequestMirrorFilter) of a request without a body (a body streams to the backend once, so a
 * request with one is not mirrored) over the request's dispatchers and pools, with its upstream fields, and forgets
 * them: their answers are read away, and failures are nobody's concern but the mirror's.
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

/** A copy's answer, read away; the copy is cut when it outlives TIMEOUT_MS. */
class ForgottenCopy implements ExchangeHandler {
  #timer: NodeJS.Timeout | undefined;

  onStart(control: RequestControl): void {
    this.#timer = setTimeout(() => control.abort(new Error("mirror copy timed out")), TIMEOUT_MS).unref();
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

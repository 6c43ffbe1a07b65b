import { endpointAddress } from "../../store/records.js";
import { type Upstream, UpstreamConnectError, type UpstreamRequest } from "./upstream.js";

export interface FetchUpstreamOptions {
  /**
   * The fetch implementation decodes gzip/deflate/br bodies itself but keeps the Content-Encoding header
   * (Node's built-in fetch does). The transport then drops Content-Encoding and Content-Length so the
   * client gets a body that matches its headers. Workers' fetch re-encodes when a response is returned
   * as is, so the Workers entry passes false.
   */
  readonly decodesContentEncoding?: boolean;
  /** Upstream URL for a request; default `http://ip:port/path` (Workers VPC bindings may want another). */
  readonly url?: (request: UpstreamRequest) => string;
  /** `fetchFn` returns a 101 Response with a `webSocket` for a WebSocket handshake (Workers; Node's does not). */
  readonly webSockets?: boolean;
}

/** Error codes of a failed connection: the request was never written, so any method may be retried. */
const CONNECT_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET_NOT_CONNECTED",
]);

const DECODED_ENCODINGS = new Set(["gzip", "x-gzip", "deflate", "br"]);

/**
 * An Upstream over the Fetch API: `redirect: "manual"` so 3xx reach the client untouched, `duplex: "half"`
 * so request bodies stream. Fetch implementations replace Host with the URL's authority (the Fetch
 * standard lists Host as a forbidden request header), so with this transport the original host reaches
 * the backend only as X-Forwarded-Host and Forwarded `host=`; the Node transport (undici Pool) keeps Host.
 */
export function createFetchUpstream(fetchFn: typeof fetch, options: FetchUpstreamOptions = {}): Upstream {
  const decodes = options.decodesContentEncoding ?? true;
  const urlOf =
    options.url ?? ((request: UpstreamRequest) => `http://${endpointAddress(request.target)}${request.path}`);
  return {
    webSockets: options.webSockets ?? false,
    async send(request) {
      const init: RequestInit & { duplex?: "half" } = {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: request.signal,
      };
      if (request.body !== null) init.duplex = "half";
      let response: Response;
      try {
        response = await fetchFn(urlOf(request), init);
      } catch (error) {
        if (!request.signal.aborted && isConnectFailure(error)) {
          throw new UpstreamConnectError(request.target, { cause: error });
        }
        throw error;
      }
      if (!decodes || request.method === "HEAD" || response.status === 101) return response;
      const encoding = response.headers.get("content-encoding");
      if (encoding === null || !DECODED_ENCODINGS.has(encoding.trim().toLowerCase())) return response;
      const headers = new Headers(response.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    },
  };
}

/** Node's fetch rejects with TypeError("fetch failed") whose cause carries the socket error code. */
export function isConnectFailure(error: unknown): boolean {
  for (let depth = 0, current: unknown = error; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && CONNECT_ERROR_CODES.has(code)) return true;
    if (current instanceof AggregateError) return current.errors.some((inner) => isConnectFailure(inner));
    current = current.cause;
  }
  return false;
}

import { reasonPhrase } from "../core/http/headers.js";
import { upstreamError } from "./connect-errors.js";
import { originOf, type Upstream, type UpstreamRequest } from "./upstream.js";

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

const DECODED_ENCODINGS = new Set(["gzip", "x-gzip", "deflate", "br"]);

/**
 * An Upstream over the Fetch API: `redirect: "manual"` so 3xx reach the client untouched, `duplex: "half"`
 * so request bodies stream. Fetch implementations replace Host with the URL's authority (the Fetch
 * standard lists Host as a forbidden request header), so with this transport the original host reaches
 * the backend only as X-Forwarded-Host and Forwarded `host=`; the Node router's own client keeps Host.
 */
export function createFetchUpstream(fetchFn: typeof fetch, options: FetchUpstreamOptions = {}): Upstream {
  const decodes = options.decodesContentEncoding ?? true;
  const urlOf = options.url ?? ((request: UpstreamRequest) => `${originOf(request.target)}${request.path}`);
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
        throw upstreamError(error, request);
      }
      if (!decodes || request.method === "HEAD" || response.status === 101) return response;
      const encoding = response.headers.get("content-encoding");
      if (encoding === null || !DECODED_ENCODINGS.has(encoding.trim().toLowerCase())) return response;
      const headers = new Headers(response.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(response.body, {
        status: response.status,
        statusText: reasonPhrase(response.statusText) ?? "",
        headers,
      });
    },
  };
}

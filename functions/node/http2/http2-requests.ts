import { type IncomingMessage, METHODS, type ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { RouterError } from "../../core/errors.js";
import { headAnswer } from "../../core/head-answers.js";
import { errorAnswerWithRequestId, requestIdOf } from "../../core/request-id.js";
import { methodProblem } from "../../core/request-method.js";
import { RequestHead, withRequestHead } from "../request-head.js";
import { authorityProblem } from "./authority.js";
import { http2ResponseHeaders } from "./connection-headers.js";

export interface Http2RequestDeps {
  /** The HTTP/1.1 server's listener for requests the head lets through (the app on @hono/node-server). */
  readonly listener: (incoming: IncomingMessage, outgoing: ServerResponse) => void;
  readonly newRequestId: () => string;
  /** Counts an answer the router gave before routing (the unrouted series). */
  readonly countRefusal: (method: string, status: number) => void;
  /** A further reason to refuse (the HTTPS listener's misdirected request), given the request's authority. */
  readonly problemOf?: (incoming: IncomingMessage, authority: string | undefined) => RouterError | undefined;
}

/** What Node's HTTP/1.1 parser takes on a request line: an HTTP/2 :method is held to the same (core/request-method.ts). */
const HTTP1_METHODS: ReadonlySet<string> = new Set(METHODS);

/**
 * The router's request listener for HTTP/2: the head is read and refused as for HTTP/1.1 (request-head.ts),
 * plus the HTTP/2 rule on :authority and Host, and the rest goes to the same listener. The direct path
 * (direct-requests.ts) writes HTTP/1.1 responses, so HTTP/2 requests never take it.
 */
export function createHttp2Requests(
  deps: Http2RequestDeps,
): (request: Http2ServerRequest, response: Http2ServerResponse) => void {
  return (request, response) => {
    // Reset by the client in the packet that opened it (rapid reset): nobody to answer, nothing to forward.
    if (request.stream.destroyed) return;
    const head = new RequestHead(request.rawHeaders);
    // @hono/node-server takes either kind of request and response (it tests for Http2ServerRequest).
    const incoming = request as unknown as IncomingMessage;
    const problem =
      head.problem ??
      authorityProblem(request.headers[":authority"], head.host) ??
      methodProblem(request.method, HTTP1_METHODS) ??
      deps.problemOf?.(incoming, request.authority || undefined);
    if (problem === undefined) {
      deps.listener(withRequestHead(incoming, head), response as unknown as ServerResponse);
      return;
    }
    refuse(deps, request, response, problem, head);
  };
}

function refuse(
  deps: Http2RequestDeps,
  request: Http2ServerRequest,
  response: Http2ServerResponse,
  problem: RouterError,
  head: RequestHead,
): void {
  const full = errorAnswerWithRequestId(problem, requestIdOf(head.requestId, deps.newRequestId));
  const answer = request.method === "HEAD" ? headAnswer(full) : full;
  deps.countRefusal(request.method, answer.status);
  response.writeHead(answer.status, http2ResponseHeaders(answer.headers));
  response.end(answer.body);
}

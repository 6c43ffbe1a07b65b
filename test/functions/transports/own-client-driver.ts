import { Readable } from "node:stream";
import { Http1Dispatcher } from "../../../functions/node/http1-dispatcher.js";
import type { UpstreamRequest } from "../../../functions/transports/upstream.js";
import type { RequestControl } from "../../../lib/http-exchange.js";
import type { OriginPool } from "../../../lib/http1/origin-pool.js";
import { ReadableBody } from "../../support/readable-body.js";
import type { TransportDriver } from "./transport.case.js";

/** RFC 9110 §6.4.1: answers that never carry content, as the web transports hand them on (a null body). */
const NO_CONTENT_STATUSES = new Set([204, 304]);

/**
 * The router's own HTTP/1.1 client (lib/http1 through node/http1-dispatcher.ts) driven to the web path's shape:
 * its request API (dispatch with an ExchangeHandler) resolved to a Response whose body is what onData hands
 * on, read with back-pressure. An answer that may carry no content resolves only once the exchange completed,
 * and fails if the client handed on any content for it.
 */
export function ownClientDriver(): TransportDriver {
  const pools = new Http1Dispatcher();
  return {
    differs: { host: "as sent", statusPast599: "refused" },
    close: async () => pools.destroy(),
    send: (request) => send(pools.poolFor(request.target), request),
  };
}

function send(pool: OriginPool, request: UpstreamRequest) {
  return new Promise<Response>((resolve, reject) => {
    let control: RequestControl | undefined;
    let body: ReadableStreamDefaultController<Uint8Array> | undefined;
    let headOnly: { init: ResponseInit; content: number } | undefined;
    const onAbort = () => control?.abort(request.signal.reason);
    request.signal.addEventListener("abort", onAbort, { once: true });
    const headers: string[] = [];
    for (const [name, value] of request.headers) headers.push(name, value);
    pool.dispatch(
      {
        method: request.method,
        path: request.path,
        headers,
        body: request.body === null ? null : new ReadableBody(Readable.fromWeb(request.body as never)),
        contentLength: undefined,
        transferCodings: undefined,
      },
      {
        onStart: (given) => {
          control = given;
        },
        onHead: (head) => {
          const fields = new Headers();
          for (let i = 0; i < head.fields.length; i += 2) {
            fields.append(head.fields[i] as string, head.fields[i + 1] as string);
          }
          const init = { status: head.status, statusText: head.reason, headers: fields };
          if (NO_CONTENT_STATUSES.has(head.status) || request.method === "HEAD") {
            headOnly = { init, content: 0 };
            return;
          }
          const stream = new ReadableStream<Uint8Array>({
            start: (controller) => {
              body = controller;
            },
            pull: () => control?.resume(),
            cancel: (reason) => control?.abort(reason instanceof Error ? reason : new Error("cancelled")),
          });
          resolve(new Response(stream, init));
        },
        onData: (chunk) => {
          if (headOnly) {
            headOnly.content += chunk.length;
            return true;
          }
          body?.enqueue(new Uint8Array(chunk));
          return (body?.desiredSize ?? 0) > 0;
        },
        onComplete: () => {
          request.signal.removeEventListener("abort", onAbort);
          if (headOnly && headOnly.content > 0)
            reject(new Error("content handed on for an answer without any"));
          else if (headOnly) resolve(new Response(null, headOnly.init));
          else body?.close();
        },
        onError: (error) => {
          request.signal.removeEventListener("abort", onAbort);
          if (body) body.error(error);
          else reject(error);
        },
      },
    );
  });
}

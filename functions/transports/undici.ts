import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { type Dispatcher, Pool } from "undici";
import { reasonPhrase } from "../core/headers.js";
import { upstreamError } from "./connect-errors.js";
import { PoolsByTarget } from "./pools-by-target.js";
import { originOf, type Upstream, type UpstreamPoolOptions } from "./upstream.js";

/**
 * The Node router's transport for the web path (HEAD requests; node/proxy.ts carries every other request on
 * its own client, node/backend-pools.ts): one keep-alive undici Pool per backend origin and `Pool.request`,
 * the cheapest of undici's ways to send (fetch builds web objects per request).
 */

export interface UndiciUpstreamOptions extends UpstreamPoolOptions {
  /** Response bodies up to this size with a Content-Length are read whole before answering (cheaper). */
  readonly bufferResponseBytes?: number;
}

export interface UndiciUpstream extends Upstream {
  /** Open pools (for metrics and tests). */
  poolCount(): number;
  /** Closes every pool; in-flight requests finish first, up to the caller's own bound. */
  close(): Promise<void>;
  /** Destroys every pool at once, failing in-flight requests. */
  destroy(): Promise<void>;
}

/** RFC 9110 §15: these statuses never carry content; a Response with a body for them would throw. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function createUndiciUpstream(options: UndiciUpstreamOptions = {}): UndiciUpstream {
  const connections = options.connectionsPerBackend ?? 128;
  const bufferBytes = options.bufferResponseBytes ?? 0;
  const pools = new PoolsByTarget<Pool>(
    {
      create: (target) =>
        new Pool(originOf(target), {
          connections,
          pipelining: 1,
          connect: { timeout: options.connectTimeoutMs ?? 5_000 },
          keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
          // Header waits are bounded by the core's per-try signal; disable undici's own (300 s default).
          headersTimeout: 0,
          bodyTimeout: options.bodyTimeoutMs ?? 300_000,
        }),
      busy: ({ stats }) => stats.running > 0 || stats.pending > 0 || stats.queued > 0,
      close: (pool) => {
        pool.close().catch(() => undefined);
      },
    },
    options.idlePoolMs ?? 60_000,
  );

  const closeAll = async (how: "close" | "destroy") => {
    const all = pools.takeAll();
    await Promise.all(all.map((pool) => (how === "close" ? pool.close() : pool.destroy())));
  };

  return {
    poolCount: () => pools.size,
    close: () => closeAll("close"),
    destroy: () => closeAll("destroy"),
    async send(request) {
      const pool = pools.poolFor(request.target);
      let data: Dispatcher.ResponseData;
      try {
        data = await pool.request({
          method: request.method as Dispatcher.HttpMethod,
          path: request.path,
          headers: request.headers,
          // undici streams any async iterable, web ReadableStream included; its types list only Readable.
          body: request.body as unknown as Readable | null,
          signal: request.signal,
        });
      } catch (error) {
        throw upstreamError(error, request);
      }
      const headers = toWebHeaders(data.headers);
      // undici decodes the reason phrase as UTF-8: one past Latin-1 would make the Response constructor throw.
      const init = { status: data.statusCode, statusText: reasonPhrase(data.statusText) ?? "", headers };
      if (NULL_BODY_STATUSES.has(data.statusCode) || request.method === "HEAD") {
        data.body.dump().catch(() => undefined);
        return new Response(null, init);
      }
      const length = Number(data.headers["content-length"]);
      if (bufferBytes > 0 && Number.isInteger(length) && length <= bufferBytes) {
        return new Response(await data.body.bytes(), init);
      }
      return new Response(webStreamOf(data.body), init);
    },
  };
}

/** Node's header object (arrays for repeated fields such as Set-Cookie) as web Headers. */
function toWebHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const name in incoming) {
    const value = incoming[name];
    if (typeof value === "string") headers.append(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return headers;
}

/**
 * A Node Readable as a web ReadableStream with backpressure: pause when the consumer's queue is full,
 * resume on pull, destroy on cancel (the backend's connection is given up as soon as the client stops
 * reading). Streamed rather than buffered, so an answer never sits whole in memory; `Readable.toWeb` and
 * `ReadableStream.from` cost no less CPU per request and leave cancel to the stream's own teardown.
 */
function webStreamOf(
  body: NodeJS.ReadableStream & { destroy(error?: Error): void },
): ReadableStream<Uint8Array> {
  // Settled by the end, an error or a cancel: a chunk the body still emits after that is dropped (enqueue
  // would throw, uncaught, from the body's 'data' event: a client resetting its HTTP/2 stream does that).
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      body.on("data", (chunk: Buffer) => {
        if (settled) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) body.pause();
      });
      body.once("end", () => {
        if (!settled) controller.close();
        settled = true;
      });
      body.once("error", (error) => {
        if (!settled) controller.error(error);
        settled = true;
      });
    },
    pull() {
      body.resume();
    },
    cancel(reason) {
      settled = true;
      body.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}

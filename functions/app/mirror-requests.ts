import type { MirrorTarget } from "../core/routes/mirrors.js";
import type { Upstream } from "../transports/upstream.js";

/** A copy that has not been answered by then is dropped. */
const MIRROR_TIMEOUT_MS = 10_000;

/**
 * The web path's copies of a request without a body (HTTPRequestMirrorFilter), through the same transport
 * as the request (fetch on Workers); the answers are dropped. The promise settles when every
 * copy did; Workers keep the isolate for it with waitUntil, so the copies do not hold up the answer.
 */
export function sendWebMirrors(
  upstream: Upstream,
  mirrors: readonly MirrorTarget[],
  request: {
    readonly method: string;
    readonly path: string;
    readonly headers: Headers;
    readonly hasBody: boolean;
  },
): Promise<void> | undefined {
  if (mirrors.length === 0 || request.hasBody) return undefined;
  return Promise.all(
    mirrors.map(async (mirror) => {
      try {
        const response = await upstream.send({
          target: { ip: mirror.ip, port: mirror.port },
          method: request.method,
          path: request.path,
          headers: new Headers(request.headers),
          body: null,
          signal: AbortSignal.timeout(MIRROR_TIMEOUT_MS),
        });
        await response.arrayBuffer();
      } catch {
        // A copy's failure is the mirror's own; the request it copies has its answer already.
      }
    }),
  ).then(() => undefined);
}

/** Keeps a Worker alive for `work` after the answer (waitUntil); on Node the promise simply runs on. */
export function keepRunning(
  c: { readonly executionCtx: { waitUntil(promise: Promise<unknown>): void } },
  work: Promise<void>,
): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // Node's adapter has no ExecutionContext: nothing ends the process's work early.
  }
}

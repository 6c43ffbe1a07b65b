import type { EndpointRecord } from "../../../store/records.js";
import { ep } from "../fixtures.js";
import {
  type Backend,
  closeAfterEach,
  type Router,
  type RouterKind,
  type RouterOptions,
  startBackend,
  startRouterOf,
} from "../harness.js";

/** Backends and routers one app test file starts, each closed after its test, newest first. */
export function appTestKit() {
  const closing = closeAfterEach();
  return {
    backend: (...args: Parameters<typeof startBackend>): Promise<Backend> => closing(startBackend(...args)),
    /** A router of `kind` (harness.ts ROUTER_KINDS): the web path or the Node fast path. */
    routerOf:
      (kind: RouterKind) =>
      (options?: RouterOptions): Promise<Router> =>
        closing(startRouterOf(kind, options)),
  };
}

export function at(b: Backend): EndpointRecord {
  return ep(b.host, b.port);
}

/** A backend that never answers (for timeouts); its sockets are closed by cleanup. */
export const hang = () => {};

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

import { lookupRoute, routeIndexOf } from "../../functions/core/snapshot/route-index.js";
import type { Snapshot } from "../../store/store.js";
/**
 * What the Workers bench measures: one isolate's view of the store, however it is kept. The current source
 * reloads the whole store (whole-store-reader.ts); a delta reader plugs in as another column of
 * WORKERS_READERS (workers-bench.ts) by implementing this and nothing else.
 */
export interface WorkersStoreReader {
  /**
   * One refresh of a warm isolate's cache, as it runs after a response once CACHE_TTL_MS has passed: opens its
   * own connection(s) and closes them before it resolves (a socket cannot outlive a request in workerd).
   * Resolves once the view is current; rejects when the refresh failed.
   */
  refresh(): Promise<void>;
  /**
   * The first request of a fresh isolate for `host`: everything it waits for before it can route, connections
   * closed as in refresh. Called once, on a new reader. Rejects when `host` cannot be routed afterwards.
   */
  coldRequest(host: string): Promise<void>;
  /**
   * The backend addresses a request for `host` would be routed to now (any order), or undefined when none.
   * The bench checks the view with it and charges its CPU to the refresh before it: a reader that defers work
   * to the next request pays for it there.
   */
  addressesOf(host: string): readonly string[] | undefined;
  /**
   * Waits for what the reader deferred past a response (`waitUntil`), e.g. the rest of the store after a cold
   * request; the bench measures it apart from the request. Omitted by a reader that defers nothing.
   */
  settle?(): Promise<void>;
}

/** Where a reader finds the store: its Redis (the counting proxy's URL, or Redis itself) and key prefix. */
export interface WorkersStoreTarget {
  readonly url: string;
  readonly prefix: string;
}

/** One column of the report: a reader by name, or a placeholder ("n/a") until it exists. */
export interface WorkersReaderColumn {
  readonly name: string;
  readonly create?: (target: WorkersStoreTarget) => WorkersStoreReader;
}

/** Every endpoint address (both families) of the route serving `host` at `/`; undefined without one. */
export function addressesServing(
  snapshot: Snapshot | undefined,
  host: string,
): readonly string[] | undefined {
  if (!snapshot) return undefined;
  const route = lookupRoute(routeIndexOf(snapshot), host, "/");
  if (!route) return undefined;
  return route.serving.flatMap(({ record }) => [
    ...record.ipv4.endpoints.map((endpoint) => endpoint.ip),
    ...record.ipv6.endpoints.map((endpoint) => endpoint.ip),
  ]);
}

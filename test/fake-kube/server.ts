import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";
import { decodeContinue, encodeContinue } from "./continue-token.js";
import { fakeKubeConfig } from "./kube-config.js";
import { readObject, writableObject } from "./request-body.js";
import { FailureQueue, type FailureRule, RequestCounter, type Verb, verbOf } from "./requests.js";
import {
  type FakeKind,
  GATEWAY_API_VERSION,
  parseResourcePath,
  RESOURCES,
  type ResourcePath,
} from "./resources.js";
import { notFound, sendJson } from "./responses.js";
import { fieldFilter, labelFilter, type ObjectFilter } from "./selectors.js";
import { statusBody } from "./status.js";
import { type ApplyInput, type FakeObject, namespaceFor, ObjectStore } from "./store.js";
import { WatchHub } from "./watches.js";

/**
 * A fake Kubernetes API server that speaks the real HTTP protocol: LIST with a global resourceVersion (paged
 * with limit/continue), chunked WATCH streams (one JSON event a line) with replay, BOOKMARKs, 410 Gone (HTTP,
 * an ERROR event on a resumed watch, an expired continue token), Leases with optimistic concurrency, and
 * faults a test injects at runtime. Where tests against a real kube-apiserver (test/envtest) found its
 * behaviour, this one follows it: bookmarks only for a resource type with an event since the watch started,
 * 403 for a while after (re)start, open watches held silent on stop.
 *
 * What the sync sends (sync/kube/kube-api.ts, reflector.ts, leader.ts, status-writer.ts): GET
 * <collection>?limit=N[&continue=T], then GET <collection>?watch=1&resourceVersion=<rv>&allowWatchBookmarks=true
 * &timeoutSeconds=S; Leases with GET/POST .../leases and GET/PUT .../leases/{name}; PUT .../{name}/status for
 * the Gateway API kinds and Ingresses (the status alone changes). No PATCH. Served kinds: resources.ts.
 */
export interface FakeKubeOptions {
  /** Bearer token requests must carry (401 otherwise). */
  readonly token?: string;
  /** How often an open watch that asked for bookmarks gets one. */
  readonly bookmarkIntervalMs?: number;
  /** Events kept for watch resumption; older resourceVersions get 410. */
  readonly historyLimit?: number;
  /** For this long after it starts, every request is answered 403, as kube-apiserver's RBAC does at start-up. */
  readonly forbiddenForMs?: number;
  /** false: the Gateway API kinds answer 404, as on a cluster without their CRDs (true by default). */
  readonly gatewayApi?: boolean;
}

export interface FakeKube {
  readonly url: string;
  readonly token: string;
  apply(object: ApplyInput): FakeObject;
  remove(kind: FakeKind, namespace: string, name: string): boolean;
  get(kind: FakeKind, namespace: string, name: string): FakeObject | undefined;
  list(kind: FakeKind, namespace?: string): FakeObject[];
  readonly resourceVersion: string;
  /** Destroys every open watch socket (the client sees a premature close, not a clean end). */
  dropAllWatches(): void;
  /** Ends every open watch cleanly, as the API server does when a watch's timeout runs out. */
  endAllWatches(): void;
  /** Open watches stay connected but never send another byte (a half-dead connection). New watches work. */
  stallWatches(): void;
  /** The next `count` requests matching `rule` get `status` with a Status body (410 on list/watch included). */
  failNext(count: number, status: number, rule?: FailureRule): void;
  /** Forgets every pending injected failure. */
  clearFailures(): void;
  /** Compacts the history: watches from any older resourceVersion get a 410 Expired ERROR event. */
  expireHistory(): void;
  /** Requests seen for `verb` (optionally of one kind), faulted ones included. */
  requests(verb: Verb, kind?: FakeKind): number;
  /** Watches currently connected (stalled ones included). */
  openWatches(kind?: FakeKind): number;
  kubeConfig(options?: { token?: string }): KubeConfig;
  /**
   * Stops serving as kube-apiserver does on SIGTERM: new connections are refused at once, requests on
   * open connections are cut, and open watches stay connected but silent for `holdWatchesMs` (60 s for the
   * real one; 0 by default), then are cut. Objects and history are kept.
   */
  stop(options?: { holdWatchesMs?: number }): Promise<void>;
  /** Serves again on the same URL; with `forbiddenForMs`, answering 403 that long first. */
  restart(options?: { forbiddenForMs?: number }): Promise<void>;
  readonly running: boolean;
  close(): Promise<void>;
}

export async function startFakeKube(options: FakeKubeOptions = {}): Promise<FakeKube> {
  const token = options.token ?? "fake-kube-token";
  const watches = new WatchHub(options.bookmarkIntervalMs ?? 60_000);
  const failures = new FailureQueue();
  const counter = new RequestCounter();
  const store = new ObjectStore(options.historyLimit ?? 1000, (event) => watches.publish(event));
  watches.attach(store);
  let forbiddenUntil = Date.now() + (options.forbiddenForMs ?? 0);
  let running = true;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!running) {
      // A stopped server: a request on a connection opened before gets no answer.
      request.socket.destroy();
      return;
    }
    const url = new URL(request.url ?? "/", "http://fake-kube");
    const path = parseResourcePath(url.pathname);
    if (!path)
      return sendJson(response, 404, statusBody(404, "the server could not find the requested resource"));
    // As kube-apiserver: authentication and authorization (and their start-up 403s) come before the handler
    // that finds no resource, so a kind whose CRD is not installed is counted, refused and faulted like others.
    const unserved = options.gatewayApi === false && RESOURCES[path.kind].apiVersion === GATEWAY_API_VERSION;
    const verb = verbOf(request.method, path, url);
    if (!verb) return sendJson(response, 405, statusBody(405, `${request.method} is not supported here`));
    counter.count(verb, path.kind);
    if (request.headers.authorization !== `Bearer ${token}`) {
      return sendJson(response, 401, statusBody(401, "Unauthorized"));
    }
    if (Date.now() < forbiddenUntil) {
      const plural = RESOURCES[path.kind].plural;
      return sendJson(response, 403, statusBody(403, `${plural} is forbidden: the RBAC cache is starting`));
    }
    const injected = failures.take(verb, path.kind);
    if (injected !== undefined) {
      return sendJson(response, injected, statusBody(injected, `injected failure ${injected}`));
    }
    if (unserved) {
      return sendJson(response, 404, statusBody(404, "the server could not find the requested resource"));
    }
    switch (verb) {
      case "list":
        return serveList(response, path, url);
      case "watch":
        return watches.serve(request, response, path, url, filtersOf(url));
      case "get":
        return serveGet(response, path);
      case "create":
        return serveCreate(request, response, path);
      case "update":
        return serveUpdate(request, response, path);
      case "status":
        return serveStatus(request, response, path);
    }
  }

  function filtersOf(url: URL): ObjectFilter {
    const byLabel = labelFilter(url.searchParams.get("labelSelector"));
    const byField = fieldFilter(url.searchParams.get("fieldSelector"));
    return (object) => byLabel(object) && byField(object);
  }

  /** Without `limit` the whole collection; with it, pages chained by an opaque `continue` token. */
  function serveList(response: ServerResponse, path: ResourcePath, url: URL): void {
    const filter = filtersOf(url);
    const resource = RESOURCES[path.kind];
    const limit = Number(url.searchParams.get("limit") ?? "0");
    const token = url.searchParams.get("continue");
    const cursor = token ? decodeContinue(token) : { revision: store.currentRevision, after: 0 };
    if (!cursor) {
      sendJson(response, 400, statusBody(400, "invalid continue token"));
      return;
    }
    if (cursor.revision < store.oldestResumableRevision) {
      const message =
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";
      sendJson(response, 410, statusBody(410, message, "Expired"));
      return;
    }
    const { items, next } =
      Number.isInteger(limit) && limit > 0
        ? store.page(path.kind, path.namespace, filter, limit, cursor.after)
        : { items: store.list(path.kind, path.namespace).filter(filter), next: undefined };
    const metadata: Record<string, string> = { resourceVersion: String(cursor.revision) };
    if (next !== undefined) metadata.continue = encodeContinue({ revision: cursor.revision, after: next });
    sendJson(response, 200, { kind: resource.listKind, apiVersion: resource.apiVersion, metadata, items });
  }

  function serveGet(response: ServerResponse, path: ResourcePath): void {
    const found = path.name
      ? store.get(path.kind, namespaceFor(path.kind, path.namespace), path.name)
      : undefined;
    if (found) sendJson(response, 200, found);
    else sendJson(response, 404, notFound(path));
  }

  async function serveCreate(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
  ): Promise<void> {
    const body = await readObject(request, response, path);
    if (!body) return;
    const namespace = namespaceFor(path.kind, path.namespace ?? body.metadata.namespace);
    if (store.get(path.kind, namespace, body.metadata.name)) {
      const message = `${RESOURCES[path.kind].plural} "${body.metadata.name}" already exists`;
      return sendJson(response, 409, statusBody(409, message, "AlreadyExists"));
    }
    sendJson(response, 201, store.apply({ ...body, metadata: { ...body.metadata, namespace } }));
  }

  async function serveUpdate(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
  ): Promise<void> {
    const write = await writableObject(request, response, path, store);
    if (!write) return;
    const { body, namespace, name } = write;
    sendJson(response, 200, store.apply({ ...body, metadata: { ...body.metadata, namespace, name } }));
  }

  /** PUT .../{name}/status: only the status changes, with the same optimistic concurrency as an update. */
  async function serveStatus(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
  ): Promise<void> {
    const write = await writableObject(request, response, path, store);
    if (!write) return;
    sendJson(response, 200, store.setStatus(path.kind, write.namespace, write.name, write.body.status));
  }

  const listen = async (at: number): Promise<Server> => {
    const created = createServer((request, response) => {
      handle(request, response).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        if (!response.headersSent) sendJson(response, 400, statusBody(400, message));
        else response.destroy();
      });
    });
    await new Promise<void>((resolve) => created.listen(at, "127.0.0.1", resolve));
    return created;
  };
  let server = await listen(0);
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    token,
    apply: (object) => store.apply(object),
    remove: (kind, namespace, name) => store.remove(kind, namespace, name),
    get: (kind, namespace, name) => store.get(kind, namespace, name),
    list: (kind, namespace) => store.list(kind, namespace),
    get resourceVersion() {
      return String(store.currentRevision);
    },
    dropAllWatches: () => watches.dropAll(),
    endAllWatches: () => watches.endAll(),
    stallWatches: () => watches.stallAll(),
    failNext: (count, status, rule = {}) => failures.add(count, status, rule),
    clearFailures: () => failures.clear(),
    expireHistory: () => store.expireHistory(),
    requests: (verb, kind) => counter.requests(verb, kind),
    openWatches: (kind) => watches.open(kind),
    kubeConfig: (overrides = {}) => fakeKubeConfig(url, overrides.token ?? token),
    async stop(stopOptions = {}) {
      if (!running) return;
      running = false;
      watches.holdThenDrop(stopOptions.holdWatchesMs ?? 0);
      server.close();
      server.closeIdleConnections();
    },
    async restart(restartOptions = {}) {
      if (running) throw new Error("the fake API server is running");
      forbiddenUntil = Date.now() + (restartOptions.forbiddenForMs ?? 0);
      server = await listen(port);
      running = true;
    },
    get running() {
      return running;
    },
    async close() {
      running = false;
      watches.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { fakeKubeConfig } from "./kube-config.js";

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";
import { authenticate, bootstrapPolicy, type FakeUserToken, forbiddenBody, isMaster } from "./access.js";
import { ACCESS_REVIEW_PATH, answerAccessReview } from "./access-review.js";
import { CrdServing, GATEWAY_API_KINDS } from "./crd-serving.js";
import { fakeKubeConfig } from "./kube-config.js";
import { isAllowed } from "./rbac.js";
import { readJson } from "./request-body.js";
import { requestInfo } from "./request-info.js";
import { RequestMetrics } from "./request-metrics.js";
import { FailureQueue, type FailureRule, RequestCounter, type Verb, verbOf } from "./requests.js";
import { type FakeKind, parseResourcePath } from "./resources.js";
import { sendJson } from "./responses.js";
import { createRestHandlers } from "./rest-handlers.js";
import { statusBody } from "./status.js";
import { type ApplyInput, type FakeObject, ObjectStore } from "./store.js";
import { WatchHub } from "./watches.js";

export type { FakeUserToken } from "./access.js";

/** The user of the default token, bound to cluster-admin. */
const DEFAULT_USER = "fake-kube";
const NOT_SERVED = "the server could not find the requested resource";

/**
 * A fake Kubernetes API server that speaks the real HTTP protocol: LIST with a global resourceVersion (paged
 * with limit/continue), chunked WATCH streams (one JSON event a line) with replay, BOOKMARKs, 410 Gone (HTTP,
 * an ERROR event on a resumed watch, an expired continue token), Leases with optimistic concurrency, and
 * faults a test injects at runtime. Where a real kube-apiserver was observed (../shared/envtest/README.md,
 * test/envtest), this one follows it: bookmarks only for a resource type with an event since the watch started,
 * 403 for a while after (re)start, open watches held silent on stop; CRD kinds as crd-serving.ts says (a plain
 * 404 when not installed, 503 with Retry-After for a moment after a restart). Each request is authenticated by its bearer token and authorised by RBAC over the Roles and
 * bindings it holds (rbac.ts) before anything looks the resource up, and counted in `apiserver_request_total`
 * on /metrics (request-metrics.ts); SelfSubjectAccessReviews are answered (access-review.ts). It fills in
 * what the API server would (api-defaults.ts). It has no admission and no controllers: a namespace need not
 * exist, no Ingress gets a default class, no clusterIP is assigned.
 *
 * What the sync sends (sync/kube/kube-api.ts, reflector.ts, leader.ts, status-writer.ts): GET
 * <collection>?limit=N[&continue=T], then GET <collection>?watch=1&resourceVersion=<rv>&allowWatchBookmarks=true
 * &timeoutSeconds=S; Leases with GET/POST .../leases and GET/PUT .../leases/{name}; PUT .../{name}/status for
 * the Gateway API kinds and Ingresses (the status alone changes). No PATCH. Served kinds: resources.ts.
 */
export interface FakeKubeOptions {
  /** The default bearer token: its user is bound to cluster-admin (an unknown token gets 401). */
  readonly token?: string;
  /** More users by token, authorised by the RBAC objects the fake holds (rbac.ts); system:masters bypass it. */
  readonly users?: readonly FakeUserToken[];
  /** How often an open watch that asked for bookmarks gets one. */
  readonly bookmarkIntervalMs?: number;
  /** Events kept for watch resumption; older resourceVersions get 410. */
  readonly historyLimit?: number;
  /**
   * For this long after it starts, every request but system:masters' is answered 403, as kube-apiserver's RBAC
   * does at start-up.
   */
  readonly forbiddenForMs?: number;
  /**
   * false: the Gateway API kinds answer 404, as on a cluster without their CRDs, until installGatewayApi()
   * installs them (true by default: all installed).
   */
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
  /**
   * Serves again on the same URL; with `forbiddenForMs`, answering 403 that long first (to all but
   * system:masters); with `gatewayApiLateForMs`, the Gateway API kinds answer 503 (Retry-After: 5) that long,
   * as a restarting kube-apiserver does until it has read its CRDs again (crd-serving.ts).
   */
  restart(options?: { forbiddenForMs?: number; gatewayApiLateForMs?: number }): Promise<void>;
  /**
   * Serves these Gateway API kinds (all by default) from now on, as once their CRDs are installed and
   * Established; the others stay a plain 404.
   */
  installGatewayApi(kinds?: readonly FakeKind[]): void;
  readonly running: boolean;
  close(): Promise<void>;
}

export async function startFakeKube(options: FakeKubeOptions = {}): Promise<FakeKube> {
  const token = options.token ?? "fake-kube-token";
  const users: FakeUserToken[] = [{ token, name: DEFAULT_USER }, ...(options.users ?? [])];
  const watches = new WatchHub(options.bookmarkIntervalMs ?? 60_000);
  const failures = new FailureQueue();
  const counter = new RequestCounter();
  let metrics = new RequestMetrics();
  const store = new ObjectStore(options.historyLimit ?? 1000, (event) => watches.publish(event));
  watches.attach(store);
  for (const object of bootstrapPolicy(DEFAULT_USER)) store.apply(object);
  const rest = createRestHandlers(store, watches);
  let forbiddenUntil = Date.now() + (options.forbiddenForMs ?? 0);
  const crds = new CrdServing(options.gatewayApi !== false);
  let running = true;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!running) {
      // A stopped server: a request on a connection opened before gets no answer.
      request.socket.destroy();
      return;
    }
    const url = new URL(request.url ?? "/", "http://fake-kube");
    const asked = requestInfo(request.method, url);
    const path = asked.resourceRequest ? parseResourcePath(url.pathname) : undefined;
    const verb = path && verbOf(request.method, path, url);
    if (path && verb) counter.count(verb, path.kind);
    const user = authenticate(request.headers.authorization, users);
    if (!user) return sendJson(response, 401, statusBody(401, "Unauthorized"));
    // As kube-apiserver: authentication and authorization (and their start-up 403s: RBAC knows no rule until
    // its cache has synced; system:masters needs none) come before the handler that finds no resource, so a
    // kind whose CRD is not installed is counted, refused and faulted like others.
    const starting = Date.now() < forbiddenUntil && !isMaster(user);
    if (starting || !isAllowed(store, user, asked))
      return sendJson(response, 403, forbiddenBody(user, asked));
    if (!asked.resourceRequest) {
      if (!crds.discovery(response, asked.path)) serveNonResource(response, asked.path);
      return;
    }
    if (url.pathname === ACCESS_REVIEW_PATH && asked.verb === "create") {
      const review = await readJson(request, response);
      if (review !== undefined) answerAccessReview(response, store, user, review);
      return;
    }
    if (!path) return sendJson(response, 404, statusBody(404, NOT_SERVED));
    if (!verb) return sendJson(response, 405, statusBody(405, `${request.method} is not supported here`));
    const counted = metrics;
    response.once("close", () => counted.record(asked, response.statusCode));
    const injected = failures.take(verb, path.kind);
    if (injected !== undefined) {
      return sendJson(response, injected, statusBody(injected, `injected failure ${injected}`));
    }
    if (crds.refused(response, path.kind)) return;
    return rest.serve(verb, request, response, path, url);
  }

  /** The health endpoints and /metrics; anything else outside the API groups is not found. */
  function serveNonResource(response: ServerResponse, path: string): void {
    if (path === "/metrics") {
      const text = metrics.render();
      response.writeHead(200, { "Content-Type": "text/plain; version=0.0.4", "Content-Length": text.length });
      response.end(text);
      return;
    }
    if (["/healthz", "/livez", "/readyz"].includes(path)) {
      response.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 2 });
      response.end("ok");
      return;
    }
    sendJson(response, 404, statusBody(404, NOT_SERVED));
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
    installGatewayApi(kinds = GATEWAY_API_KINDS) {
      crds.install(kinds);
    },
    async restart(restartOptions = {}) {
      if (running) throw new Error("the fake API server is running");
      forbiddenUntil = Date.now() + (restartOptions.forbiddenForMs ?? 0);
      crds.restarted(restartOptions.gatewayApiLateForMs ?? 0);
      // A new kube-apiserver process: its counters start from zero.
      metrics = new RequestMetrics();
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

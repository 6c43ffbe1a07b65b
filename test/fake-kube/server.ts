import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { type FakeKind, parseResourcePath, RESOURCES, type ResourcePath } from "./resources.js";
import { fieldFilter, labelFilter, type ObjectFilter } from "./selectors.js";
import { statusBody } from "./status.js";
import { type ApplyInput, asKind, type FakeObject, ObjectStore, type StoredEvent } from "./store.js";

/**
 * A fake Kubernetes API server that speaks the real HTTP protocol to the real @kubernetes/client-node:
 * LIST with a global resourceVersion, chunked WATCH streams (one JSON event a line) with replay, BOOKMARKs,
 * 410 Gone, Leases with optimistic concurrency, and faults a test injects at runtime.
 *
 * What client-node 1.4.0 sends (read from dist/cache.js, dist/watch.js and the generated APIs):
 * - ListWatch lists with GET <collection> (no query), then watches GET <collection>?watch=true&resourceVersion=<list rv>
 *   (plus labelSelector/fieldSelector when given). It never asks for bookmarks itself; sync/informers.ts does.
 * - CoordinationV1Api: GET/POST .../leases, GET/PUT .../leases/{name}. No PATCH.
 */
export type Verb = "list" | "watch" | "get" | "create" | "update";

export interface FakeKubeOptions {
  /** Bearer token requests must carry (401 otherwise). */
  readonly token?: string;
  /** How often an open watch that asked for bookmarks gets one. */
  readonly bookmarkIntervalMs?: number;
  /** Events kept for watch resumption; older resourceVersions get 410. */
  readonly historyLimit?: number;
}

export interface FailureRule {
  readonly verb?: Verb;
  readonly kind?: FakeKind;
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
  close(): Promise<void>;
}

interface OpenWatch {
  readonly kind: FakeKind;
  readonly namespace: string | undefined;
  readonly filter: ObjectFilter;
  readonly response: ServerResponse;
  readonly timers: NodeJS.Timeout[];
  stalled: boolean;
}

interface PendingFailure {
  remaining: number;
  readonly status: number;
  readonly rule: FailureRule;
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const MAX_BODY_BYTES = 1024 * 1024;

export async function startFakeKube(options: FakeKubeOptions = {}): Promise<FakeKube> {
  const token = options.token ?? "fake-kube-token";
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
  const watches = new Set<OpenWatch>();
  const failures: PendingFailure[] = [];
  const counters = new Map<string, number>();
  const store = new ObjectStore(options.historyLimit ?? 1000, (event) => {
    for (const watch of watches) deliver(watch, event);
  });

  function deliver(watch: OpenWatch, event: StoredEvent): void {
    if (watch.stalled || event.kind !== watch.kind) return;
    if (watch.namespace !== undefined && event.object.metadata.namespace !== watch.namespace) return;
    if (!watch.filter(event.object)) return;
    writeEvent(watch.response, event.type, event.object);
  }

  function count(verb: Verb, kind: FakeKind): void {
    for (const key of [verb, `${verb} ${kind}`]) counters.set(key, (counters.get(key) ?? 0) + 1);
  }

  function takeFailure(verb: Verb, kind: FakeKind): number | undefined {
    const index = failures.findIndex(
      (f) => f.remaining > 0 && (f.rule.verb ?? verb) === verb && (f.rule.kind ?? kind) === kind,
    );
    const failure = failures[index];
    if (!failure) return undefined;
    failure.remaining -= 1;
    if (failure.remaining === 0) failures.splice(index, 1);
    return failure.status;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://fake-kube");
    const path = parseResourcePath(url.pathname);
    if (!path) return sendJson(response, 404, statusBody(404, `the server could not find ${url.pathname}`));
    const verb = verbOf(request.method, path, url);
    if (!verb) return sendJson(response, 405, statusBody(405, `${request.method} is not supported here`));
    count(verb, path.kind);
    if (request.headers.authorization !== `Bearer ${token}`) {
      return sendJson(response, 401, statusBody(401, "Unauthorized"));
    }
    const injected = takeFailure(verb, path.kind);
    if (injected !== undefined) {
      return sendJson(response, injected, statusBody(injected, `injected failure ${injected}`));
    }
    switch (verb) {
      case "list":
        return serveList(response, path, url);
      case "watch":
        return serveWatch(request, response, path, url);
      case "get":
        return serveGet(response, path);
      case "create":
        return serveCreate(request, response, path);
      case "update":
        return serveUpdate(request, response, path);
    }
  }

  function filtersOf(url: URL): ObjectFilter {
    const byLabel = labelFilter(url.searchParams.get("labelSelector"));
    const byField = fieldFilter(url.searchParams.get("fieldSelector"));
    return (object) => byLabel(object) && byField(object);
  }

  function serveList(response: ServerResponse, path: ResourcePath, url: URL): void {
    const filter = filtersOf(url);
    const resource = RESOURCES[path.kind];
    sendJson(response, 200, {
      kind: resource.listKind,
      apiVersion: resource.apiVersion,
      metadata: { resourceVersion: String(store.currentRevision) },
      items: store.list(path.kind, path.namespace).filter(filter),
    });
  }

  function serveWatch(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
    url: URL,
  ): void {
    const filter = filtersOf(url);
    const requested = url.searchParams.get("resourceVersion") ?? "";
    const from = requested === "" || requested === "0" ? undefined : Number(requested);
    if (from !== undefined && !Number.isInteger(from)) {
      sendJson(response, 400, statusBody(400, `invalid resourceVersion ${requested}`));
      return;
    }
    response.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
    response.flushHeaders();
    if (from !== undefined) {
      const replay = store.eventsAfter(from);
      if (!replay) {
        // The API server reports compaction on the stream itself, then closes it (apimachinery watch cache).
        const message = `too old resource version: ${from} (${store.oldestResumableRevision})`;
        writeEvent(response, "ERROR", statusBody(410, message, "Expired"));
        response.end();
        return;
      }
      const watch = register(request, response, path, filter, url);
      for (const event of replay) deliver(watch, event);
      return;
    }
    // resourceVersion unset or "0": synthetic ADDED events for the current state, then live events.
    register(request, response, path, filter, url);
    for (const object of store.list(path.kind, path.namespace).filter(filter)) {
      writeEvent(response, "ADDED", object);
    }
  }

  function register(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
    filter: ObjectFilter,
    url: URL,
  ): OpenWatch {
    const watch: OpenWatch = {
      kind: path.kind,
      namespace: path.namespace,
      filter,
      response,
      timers: [],
      stalled: false,
    };
    watches.add(watch);
    if (url.searchParams.get("allowWatchBookmarks") === "true") {
      const resource = RESOURCES[path.kind];
      const bookmark = setInterval(() => {
        if (watch.stalled) return;
        writeEvent(response, "BOOKMARK", {
          kind: resource.kind,
          apiVersion: resource.apiVersion,
          metadata: { resourceVersion: String(store.currentRevision) },
        });
      }, bookmarkIntervalMs);
      watch.timers.push(bookmark);
    }
    const timeoutSeconds = Number(url.searchParams.get("timeoutSeconds") ?? "");
    if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) {
      watch.timers.push(setTimeout(() => response.end(), timeoutSeconds * 1000));
    }
    const forget = () => {
      for (const timer of watch.timers) clearInterval(timer);
      watches.delete(watch);
    };
    request.on("close", forget);
    response.on("close", forget);
    return watch;
  }

  function serveGet(response: ServerResponse, path: ResourcePath): void {
    const found = path.name ? store.get(path.kind, path.namespace ?? "default", path.name) : undefined;
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
    const namespace = path.namespace ?? body.metadata.namespace ?? "default";
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
    const body = await readObject(request, response, path);
    if (!body || !path.name) return;
    const namespace = path.namespace ?? "default";
    const current = store.get(path.kind, namespace, path.name);
    if (!current) return sendJson(response, 404, notFound(path));
    const expected = body.metadata.resourceVersion;
    // Optimistic concurrency (API conventions, "Concurrency Control and Consistency"): a stale
    // resourceVersion is a 409 Conflict; an empty one is an unconditional update.
    if (typeof expected === "string" && expected !== "" && expected !== current.metadata.resourceVersion) {
      const message = `Operation cannot be fulfilled on ${RESOURCES[path.kind].plural} "${path.name}": the object has been modified; please apply your changes to the latest version and try again`;
      return sendJson(response, 409, statusBody(409, message, "Conflict"));
    }
    sendJson(
      response,
      200,
      store.apply({ ...body, metadata: { ...body.metadata, namespace, name: path.name } }),
    );
  }

  async function readObject(
    request: IncomingMessage,
    response: ServerResponse,
    path: ResourcePath,
  ): Promise<(ApplyInput & { metadata: { resourceVersion?: unknown } }) | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      size += buffer.length;
      if (size > MAX_BODY_BYTES) {
        sendJson(response, 413, statusBody(413, "request entity too large", "RequestEntityTooLarge"));
        return undefined;
      }
      chunks.push(buffer);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      sendJson(response, 400, statusBody(400, "request body is not JSON"));
      return undefined;
    }
    const problem = objectProblem(parsed, path.kind);
    if (problem) {
      sendJson(response, 400, statusBody(400, problem));
      return undefined;
    }
    return parsed as ApplyInput & { metadata: { resourceVersion?: unknown } };
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!response.headersSent) sendJson(response, 400, statusBody(400, message));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
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
    dropAllWatches() {
      for (const watch of [...watches]) {
        watches.delete(watch);
        watch.response.destroy();
      }
    },
    endAllWatches() {
      for (const watch of [...watches]) {
        watches.delete(watch);
        watch.response.end();
      }
    },
    stallWatches() {
      for (const watch of watches) watch.stalled = true;
    },
    failNext(countOf, status, rule = {}) {
      failures.push({ remaining: countOf, status, rule });
    },
    clearFailures() {
      failures.length = 0;
    },
    expireHistory: () => store.expireHistory(),
    requests: (verb, kind) => counters.get(kind ? `${verb} ${kind}` : verb) ?? 0,
    openWatches: (kind) => [...watches].filter((w) => kind === undefined || w.kind === kind).length,
    kubeConfig(overrides = {}) {
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: "fake", server: url, skipTLSVerify: true }],
        users: [{ name: "fake", token: overrides.token ?? token }],
        contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
        currentContext: "fake",
      });
      return config;
    },
    async close() {
      for (const watch of [...watches]) {
        for (const timer of watch.timers) clearInterval(timer);
        watch.response.destroy();
      }
      watches.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function verbOf(method: string | undefined, path: ResourcePath, url: URL): Verb | undefined {
  if (method === "GET") {
    if (path.name) return "get";
    return url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1"
      ? "watch"
      : "list";
  }
  if (method === "POST" && !path.name && path.namespace) return "create";
  if (method === "PUT" && path.name && path.namespace) return "update";
  return undefined;
}

function notFound(path: ResourcePath): ReturnType<typeof statusBody> {
  return statusBody(404, `${RESOURCES[path.kind].plural} "${path.name ?? ""}" not found`, "NotFound");
}

/** What the API server's validation would refuse for the fields this fake cares about. */
function objectProblem(input: unknown, kind: FakeKind): string | undefined {
  if (typeof input !== "object" || input === null) return "body must be an object";
  const object = input as { kind?: unknown; metadata?: { name?: unknown }; spec?: Record<string, unknown> };
  if (object.kind !== undefined && object.kind !== kind)
    return `kind ${String(object.kind)} does not match ${kind}`;
  if (typeof object.metadata?.name !== "string" || object.metadata.name === "")
    return "metadata.name: Required value";
  if (kind === "Lease" && object.spec) {
    // Lease times are metav1.MicroTime: RFC 3339 with exactly six fractional digits.
    for (const field of ["acquireTime", "renewTime"]) {
      const value = object.spec[field];
      if (value !== undefined && value !== null && (typeof value !== "string" || !MICRO_TIME.test(value))) {
        return `spec.${field}: not a MicroTime (RFC 3339 with microseconds): ${String(value)}`;
      }
    }
    const duration = object.spec.leaseDurationSeconds;
    if (
      duration !== undefined &&
      duration !== null &&
      !(Number.isInteger(duration) && Number(duration) > 0)
    ) {
      return "spec.leaseDurationSeconds: must be a positive integer";
    }
  }
  asKind(kind);
  return undefined;
}

function writeEvent(response: ServerResponse, type: string, object: unknown): void {
  if (response.writableEnded || response.destroyed) return;
  response.write(`${JSON.stringify({ type, object })}\n`);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

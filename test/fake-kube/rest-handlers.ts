import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeContinue, encodeContinue } from "./continue-token.js";
import { readObject, writableObject } from "./request-body.js";
import type { Verb } from "./requests.js";
import { RESOURCES, type ResourcePath } from "./resources.js";
import { notFound, sendJson } from "./responses.js";
import { fieldFilter, labelFilter, type ObjectFilter } from "./selectors.js";
import { statusBody } from "./status.js";
import { namespaceFor, type ObjectStore } from "./store.js";
import type { WatchHub } from "./watches.js";

/**
 * The fake API server's REST verbs on the kinds it serves: LIST (whole, or paged with limit and an opaque
 * continue token), WATCH, GET, POST, PUT and PUT of the status subresource, with optimistic concurrency.
 */
export function createRestHandlers(store: ObjectStore, watches: WatchHub) {
  function filtersOf(url: URL): ObjectFilter {
    const byLabel = labelFilter(url.searchParams.get("labelSelector"));
    const byField = fieldFilter(url.searchParams.get("fieldSelector"));
    return (object) => byLabel(object) && byField(object);
  }

  /**
   * Without `limit` the whole collection; with it, pages chained by an opaque `continue` token, every page at the
   * first page's revision.
   */
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
        ? store.page(path.kind, path.namespace, filter, limit, cursor.after, cursor.revision)
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

  return {
    async serve(
      verb: Verb,
      request: IncomingMessage,
      response: ServerResponse,
      path: ResourcePath,
      url: URL,
    ): Promise<void> {
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
    },
  };
}

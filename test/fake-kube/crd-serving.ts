import type { ServerResponse } from "node:http";
import { type FakeKind, GATEWAY_API_VERSION, RESOURCES } from "./resources.js";
import { statusBody } from "./status.js";

/** The Gateway API kinds, each served by its own CustomResourceDefinition. */
export const GATEWAY_API_KINDS: readonly FakeKind[] = (Object.keys(RESOURCES) as FakeKind[]).filter(
  (kind) => RESOURCES[kind].apiVersion === GATEWAY_API_VERSION,
);

/** kube-apiserver's notfoundhandler while MuxAndDiscoveryComplete is not signalled (k8s.io/apiserver 1.24+). */
export const PATHS_NOT_INSTALLED =
  "the request has been made before all known HTTP paths have been installed, please try again";

/**
 * Which CRD kinds the fake serves, answered as kube-apiserver 1.26 answers them (read in its source:
 * apiextensions-apiserver's crdHandler and k8s.io/apiserver's notfoundhandler):
 * - a kind whose CRD is installed and Established is served;
 * - a kind whose CRD is not installed falls through the handler chain to Go's http.NotFound: a 404 whose body
 *   is the text "404 page not found", not a Status;
 * - for a while after a (re)start, until the CRD informer has synced and with it the MuxAndDiscoveryComplete
 *   signal, every path the server does not know yet, a CRD's resources and discovery included, answers 503
 *   with a Status (reason ServiceUnavailable, details.retryAfterSeconds 5) and `Retry-After: 5`;
 * - discovery of the group version (GET /apis/gateway.networking.k8s.io/v1) lists the installed kinds, and is
 *   that same 404 when none is installed.
 */
export class CrdServing {
  private readonly installed = new Set<FakeKind>();
  private knownPathsFrom = 0;

  constructor(installAll: boolean) {
    if (installAll) this.install(GATEWAY_API_KINDS);
  }

  install(kinds: readonly FakeKind[]): void {
    for (const kind of kinds) this.installed.add(kind);
  }

  /** A new process: unknown paths answer 503 for `forMs`. */
  restarted(forMs: number): void {
    this.knownPathsFrom = Date.now() + forMs;
  }

  /** Answers a request for `kind` unless it is served; true when it answered. */
  refused(response: ServerResponse, kind: FakeKind): boolean {
    if (!GATEWAY_API_KINDS.includes(kind)) return false;
    if (this.installed.has(kind) && !this.starting()) return false;
    if (this.starting()) sendStarting(response);
    else sendPageNotFound(response);
    sendPageNotFound(response);
    return true;
  }

  /** Answers the Gateway API's group version discovery; false for any other path. */
  discovery(response: ServerResponse, path: string): boolean {
    if (path !== `/apis/${GATEWAY_API_VERSION}`) return false;
    const kinds = GATEWAY_API_KINDS.filter((kind) => this.installed.has(kind));
    if (this.starting() || kinds.length === 0) {
      if (this.starting()) sendStarting(response);
      else sendPageNotFound(response);
      return true;
    }
    const text = JSON.stringify({
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: GATEWAY_API_VERSION,
      resources: kinds.map((kind) => ({
        name: RESOURCES[kind].plural,
        singularName: kind.toLowerCase(),
        namespaced: RESOURCES[kind].namespaced,
        kind,
        verbs: ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
      })),
    });
    response.writeHead(200, {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(text),
    });
    response.end(text);
    return true;
  }

  private starting(): boolean {
    return Date.now() < this.knownPathsFrom;
  }
}

function sendStarting(response: ServerResponse): void {
  const body = { ...statusBody(503, PATHS_NOT_INSTALLED), details: { retryAfterSeconds: 5 } };
  const text = JSON.stringify(body);
  response.writeHead(503, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    "Retry-After": "5",
  });
  response.end(text);
}

/** Go's http.NotFound, which ends kube-apiserver's handler chain. */
function sendPageNotFound(response: ServerResponse): void {
  const text = "404 page not found\n";
  response.writeHead(404, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

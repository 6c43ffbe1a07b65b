import type { Result } from "../../../lib/result.js";
import type { BackendRef, RouteMatch } from "../../../store/routes.js";
import { type BackendContext, resolveBackendRef } from "../gateway/backends.js";
import { pathValueProblem } from "../gateway/matches.js";
import type { IngressBackend, IngressPath } from "./objects.js";

/**
 * HTTPIngressPath → store match (networking.k8s.io/v1):
 * - `Exact`: the whole path, case-sensitively; a trailing slash counts.
 * - `Prefix`: element-wise prefix of the path split by "/", trailing slash ignored (`/foo/bar` matches
 *   `/foo/bar/baz`, not `/foo/barbaz`): the Gateway API's PathPrefix.
 * - `ImplementationSpecific`: here the same as `Prefix`. Paths written for other controllers' dialects
 *   (regular expressions, rewrite captures) are literal prefixes here, and refused when they hold characters
 *   a URL path cannot (the path is then left out and reported).
 * An empty path (allowed for ImplementationSpecific) is "/". Kubernetes gives precedence to the longest
 * matching path, then Exact over Prefix; among the paths that match one request that is the Gateway API
 * order the router applies (an Exact match is at least as long as any prefix that matches the same path).
 */
export function ingressMatch(path: IngressPath): Result<RouteMatch> {
  const value = path.path || "/";
  const type = path.pathType ?? "ImplementationSpecific";
  if (type !== "Exact" && type !== "Prefix" && type !== "ImplementationSpecific") {
    return { ok: false, error: `pathType ${type} is not supported` };
  }
  const problem = pathValueProblem(value);
  if (problem) return { ok: false, error: `path "${value}" ${problem}` };
  if (type === "Exact") return { ok: true, value: { path: { type: "Exact", value }, headers: [] } };
  const prefix = value.replace(/\/+$/, "") || "/";
  return { ok: true, value: { path: { type: "PathPrefix", value: prefix }, headers: [] } };
}

/**
 * IngressBackend → store backend, weight 1. A Service port by number or by name (resolved against the
 * Service's ports). A Service this cluster does not have, with its port by number, is published as a valid
 * backend and reported, as for backendRefs (gateway/backends.ts: the router finds it in other clusters). A
 * `resource` backend, a missing port, or a port by name on a missing Service stay as `{ invalid }` so their
 * requests are answered 500 rather than sent elsewhere.
 */
export function ingressBackend(
  backend: IngressBackend,
  namespace: string,
  context: BackendContext,
): { backend: BackendRef; problem?: string } {
  const invalid = (message: string) => ({
    backend: { invalid: message.slice(0, 256), weight: 1 },
    problem: message,
  });
  const service = backend.service;
  if (!service) {
    return invalid(
      backend.resource ? "InvalidKind: resource backends are not supported" : "BackendNotFound: no service",
    );
  }
  const target = `${namespace}/${service.name}`;
  let port = service.port?.number ?? undefined;
  const portName = service.port?.name;
  if (port === undefined && portName) {
    const found = context.services.get(target);
    // Records and routers name backends by port number; only the Service maps a name to its number, and
    // another cluster's Service may map it differently, so without the Service here there is no backend.
    if (!found) return invalid(`BackendNotFound: Service ${target} not found (port named ${portName})`);
    port = (found.spec?.ports ?? []).find((item) => item.name === portName)?.port;
    if (port === undefined)
      return invalid(`BackendNotFound: Service ${target} has no port named ${portName}`);
  }
  const resolved = resolveBackendRef({ name: service.name, port }, namespace, "Ingress", context);
  return resolved.problem
    ? { backend: resolved.backend, problem: `${resolved.problem.reason}: ${resolved.problem.message}` }
    : { backend: resolved.backend };
}

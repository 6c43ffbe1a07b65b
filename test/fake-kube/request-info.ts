/**
 * What a request asks, in the attributes Kubernetes authorization decides on
 * (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#review-your-request-attributes):
 * read from the URL alone, before anyone knows whether the resource is served, as kube-apiserver does, so a
 * request for a resource the fake does not serve (Pods) is refused like any other.
 */
export type RequestInfo = ResourceRequest | NonResourceRequest;

export interface ResourceRequest {
  readonly resourceRequest: true;
  /** get, list, watch, create, update, patch, delete or deletecollection. */
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  /** Undefined for a request across all namespaces or of a cluster-scoped resource. */
  readonly namespace: string | undefined;
  readonly resource: string;
  /** "" when the request is for the object itself. */
  readonly subresource: string;
  /** Undefined for a collection (a field selector on metadata.name names one, as the API server reads it). */
  readonly name: string | undefined;
}

export interface NonResourceRequest {
  readonly resourceRequest: false;
  /** The lower-cased HTTP method: get, post, put... */
  readonly verb: string;
  readonly path: string;
}

/** Paths below a Namespace that are its own subresources, not resources inside it. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

export function requestInfo(method: string | undefined, url: URL): RequestInfo {
  const segments = url.pathname.split("/").filter((segment) => segment !== "");
  const httpVerb = (method ?? "GET").toLowerCase();
  let apiGroup: string;
  let apiVersion: string;
  let rest: string[];
  if (segments[0] === "api" && segments.length >= 3) {
    apiGroup = "";
    apiVersion = segments[1] ?? "";
    rest = segments.slice(2);
  } else if (segments[0] === "apis" && segments.length >= 4) {
    apiGroup = segments[1] ?? "";
    apiVersion = segments[2] ?? "";
    rest = segments.slice(3);
  } else {
    return { resourceRequest: false, verb: httpVerb, path: url.pathname };
  }
  rest = rest.map(decodeURIComponent);

  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 2) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? "")) rest = rest.slice(2);
  }
  const [resource = "", given, ...subresources] = rest;
  const named = given ?? selectedName(url);
  return {
    resourceRequest: true,
    verb: resourceVerb(httpVerb, given !== undefined, url),
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource: subresources.join("/"),
    name: named,
  };
}

function resourceVerb(httpVerb: string, named: boolean, url: URL): string {
  switch (httpVerb) {
    case "get":
    case "head": {
      const watch = url.searchParams.get("watch");
      if (watch === "true" || watch === "1") return "watch";
      return named ? "get" : "list";
    }
    case "post":
      return "create";
    case "put":
      return "update";
    case "patch":
      return "patch";
    case "delete":
      return named ? "delete" : "deletecollection";
    default:
      return httpVerb;
  }
}

/** `fieldSelector=metadata.name=X` narrows a list or watch to one object, and authorization sees its name. */
function selectedName(url: URL): string | undefined {
  const selector = url.searchParams.get("fieldSelector");
  const match = selector ? /^metadata\.name==?([^,]+)$/.exec(selector.trim()) : null;
  return match?.[1];
}

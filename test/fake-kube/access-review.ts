import type { ServerResponse } from "node:http";
import { type FakeUser, isAllowed } from "./rbac.js";
import type { RequestInfo } from "./request-info.js";
import { sendJson } from "./responses.js";
import { statusBody } from "./status.js";
import type { ObjectStore } from "./store.js";

/**
 * SelfSubjectAccessReview (authorization.k8s.io/v1): "may I?" answered by the same RBAC evaluation every
 * request goes through (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access).
 * Nothing is stored; the review comes back with its status filled in.
 */
export const ACCESS_REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

interface ReviewSpec {
  readonly resourceAttributes?: {
    readonly verb?: string;
    readonly group?: string;
    readonly version?: string;
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly nonResourceAttributes?: { readonly path?: string; readonly verb?: string };
}

export function answerAccessReview(
  response: ServerResponse,
  store: ObjectStore,
  user: FakeUser,
  body: unknown,
): void {
  const spec = (body as { spec?: ReviewSpec } | null)?.spec;
  const asked = spec && reviewedRequest(spec);
  if (!asked) {
    sendJson(
      response,
      400,
      statusBody(400, "spec.resourceAttributes or spec.nonResourceAttributes required"),
    );
    return;
  }
  const allowed = isAllowed(store, user, asked);
  sendJson(response, 201, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    metadata: { creationTimestamp: null },
    spec,
    status: allowed ? { allowed: true, reason: "allowed by RBAC" } : { allowed: false },
  });
}

function reviewedRequest(spec: ReviewSpec): RequestInfo | undefined {
  const resource = spec.resourceAttributes;
  if (resource) {
    return {
      resourceRequest: true,
      verb: resource.verb ?? "",
      apiGroup: resource.group ?? "",
      apiVersion: resource.version ?? "",
      namespace: resource.namespace || undefined,
      resource: resource.resource ?? "",
      subresource: resource.subresource ?? "",
      name: resource.name || undefined,
    };
  }
  const path = spec.nonResourceAttributes;
  return path ? { resourceRequest: false, verb: path.verb ?? "", path: path.path ?? "" } : undefined;
}

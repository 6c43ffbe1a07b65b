import { type FakeUser, MASTERS_GROUP } from "./rbac.js";
import type { RequestInfo } from "./request-info.js";
import { type StatusBody, statusBody } from "./status.js";
import type { ApplyInput } from "./store.js";

/**
 * Who a request is (static bearer tokens, as kube-apiserver's --token-auth-file) and the RBAC objects the fake
 * starts with. Every authenticated user is also in `system:authenticated`; a request without a token is
 * `system:anonymous` in `system:unauthenticated` (anonymous auth is on by default), and a token nobody holds
 * is a 401.
 */
export interface FakeUserToken {
  readonly token: string;
  readonly name: string;
  readonly groups?: readonly string[];
}

export const ANONYMOUS: FakeUser = { name: "system:anonymous", groups: ["system:unauthenticated"] };

/** The user a bearer token stands for; undefined for a token nobody holds (401). */
export function authenticate(
  authorization: string | undefined,
  users: readonly FakeUserToken[],
): FakeUser | undefined {
  if (authorization === undefined) return ANONYMOUS;
  const found = users.find((user) => authorization === `Bearer ${user.token}`);
  return found && { name: found.name, groups: [...(found.groups ?? []), "system:authenticated"] };
}

export function isMaster(user: FakeUser): boolean {
  return user.groups.includes(MASTERS_GROUP);
}

const RBAC = "rbac.authorization.k8s.io/v1";
const roleRef = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name });

/**
 * The part of kube-apiserver's bootstrap policy the fake needs: cluster-admin (bound to system:masters, and here
 * also to `defaultUser`, the user of the fake's default token), system:basic-user (anyone authenticated may ask
 * what they may do: SelfSubjectAccessReviews) and system:public-info-viewer (the health endpoints).
 */
export function bootstrapPolicy(defaultUser: string): ApplyInput[] {
  const clusterRole = (name: string, rules: object[]): ApplyInput => ({
    apiVersion: RBAC,
    kind: "ClusterRole",
    metadata: { name },
    rules,
  });
  const binding = (name: string, role: string, subjects: object[]): ApplyInput => ({
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: roleRef(role),
    subjects,
  });
  const group = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name });
  return [
    clusterRole("cluster-admin", [
      { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
      { nonResourceURLs: ["*"], verbs: ["*"] },
    ]),
    binding("cluster-admin", "cluster-admin", [group(MASTERS_GROUP)]),
    binding("fake-kube:default-user", "cluster-admin", [
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: defaultUser },
    ]),
    clusterRole("system:basic-user", [
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        verbs: ["create"],
      },
    ]),
    binding("system:basic-user", "system:basic-user", [group("system:authenticated")]),
    // Discovery, for every authenticated user (kube-apiserver's bootstrap policy: system:discovery).
    clusterRole("system:discovery", [
      {
        nonResourceURLs: [
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
          "/openapi",
          "/openapi/*",
          "/version",
          "/version/",
        ],
        verbs: ["get"],
      },
    ]),
    binding("system:discovery", "system:discovery", [group("system:authenticated")]),
    clusterRole("system:public-info-viewer", [
      { nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"], verbs: ["get"] },
    ]),
    binding("system:public-info-viewer", "system:public-info-viewer", [
      group("system:authenticated"),
      group("system:unauthenticated"),
    ]),
  ];
}

/** The 403 Status kube-apiserver answers when RBAC allows nothing the request needs. */
export function forbiddenBody(user: FakeUser, request: RequestInfo): StatusBody {
  if (!request.resourceRequest) {
    const message = `forbidden: User "${user.name}" cannot ${request.verb} path "${request.path}"`;
    return statusBody(403, message, "Forbidden", {});
  }
  const groupResource =
    request.apiGroup === "" ? request.resource : `${request.resource}.${request.apiGroup}`;
  const target = request.name === undefined ? groupResource : `${groupResource} "${request.name}"`;
  const resource =
    request.subresource === "" ? request.resource : `${request.resource}/${request.subresource}`;
  const scope =
    request.namespace === undefined ? "at the cluster scope" : `in the namespace "${request.namespace}"`;
  const message = `${target} is forbidden: User "${user.name}" cannot ${request.verb} resource "${resource}" in API group "${request.apiGroup}" ${scope}`;
  return statusBody(403, message, "Forbidden", {
    ...(request.name === undefined ? {} : { name: request.name }),
    group: request.apiGroup,
    kind: request.resource,
  });
}

import type { RequestInfo } from "./request-info.js";
import type { FakeObject, ObjectStore } from "./store.js";

/**
 * RBAC as the API server documents it (https://kubernetes.io/docs/reference/access-authn-authz/rbac/),
 * evaluated on every request from the Roles, ClusterRoles and their bindings the fake holds: a
 * ClusterRoleBinding grants its ClusterRole everywhere; a RoleBinding grants its Role, or a ClusterRole, in its
 * own namespace only. Rules only add permissions. The group `system:masters` bypasses RBAC altogether, as
 * kube-apiserver's privileged-group authorizer does. ClusterRole aggregation is not done: that is a controller
 * of kube-controller-manager, which no envtest runs either.
 */
export interface FakeUser {
  readonly name: string;
  readonly groups: readonly string[];
}

export const MASTERS_GROUP = "system:masters";

interface PolicyRule {
  readonly verbs?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

interface Subject {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

interface Binding {
  readonly namespace: string | undefined;
  readonly roleRef: { readonly kind?: string; readonly name?: string };
  readonly subjects: readonly Subject[];
}

export function isAllowed(store: ObjectStore, user: FakeUser, request: RequestInfo): boolean {
  if (user.groups.includes(MASTERS_GROUP)) return true;
  const namespace = request.resourceRequest ? request.namespace : undefined;
  const bindings = [
    ...store.list("ClusterRoleBinding").map((object) => bindingOf(object, undefined)),
    ...(namespace === undefined
      ? []
      : store.list("RoleBinding", namespace).map((object) => bindingOf(object, namespace))),
  ];
  return bindings.some(
    (binding) =>
      binding.subjects.some((subject) => appliesTo(subject, user, binding.namespace)) &&
      rulesOf(store, binding).some((rule) => ruleAllows(rule, request)),
  );
}

function bindingOf(object: FakeObject, namespace: string | undefined): Binding {
  const roleRef = (object.roleRef ?? {}) as Binding["roleRef"];
  const subjects = Array.isArray(object.subjects) ? (object.subjects as Subject[]) : [];
  return { namespace, roleRef, subjects };
}

function rulesOf(store: ObjectStore, binding: Binding): readonly PolicyRule[] {
  const name = binding.roleRef.name ?? "";
  const role =
    binding.roleRef.kind === "Role" && binding.namespace !== undefined
      ? store.get("Role", binding.namespace, name)
      : binding.roleRef.kind === "ClusterRole"
        ? store.get("ClusterRole", "", name)
        : undefined;
  return Array.isArray(role?.rules) ? (role.rules as PolicyRule[]) : [];
}

/** A ServiceAccount subject without a namespace means the binding's own (RoleBindings only). */
function appliesTo(subject: Subject, user: FakeUser, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case "User":
      return subject.name === user.name;
    case "Group":
      return subject.name !== undefined && user.groups.includes(subject.name);
    case "ServiceAccount": {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== undefined && user.name === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function ruleAllows(rule: PolicyRule, request: RequestInfo): boolean {
  if (!matchesAny(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) {
    return (rule.nonResourceURLs ?? []).some((pattern) =>
      pattern.endsWith("*") ? request.path.startsWith(pattern.slice(0, -1)) : pattern === request.path,
    );
  }
  if (!matchesAny(rule.apiGroups, request.apiGroup)) return false;
  const resources = rule.resources ?? [];
  const wanted = request.subresource === "" ? request.resource : `${request.resource}/${request.subresource}`;
  const resourceMatches = resources.some(
    (resource) =>
      resource === "*" ||
      resource === wanted ||
      (request.subresource !== "" && resource === `*/${request.subresource}`),
  );
  if (!resourceMatches) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (request.name !== undefined && names.includes(request.name));
}

function matchesAny(values: readonly string[] | undefined, wanted: string): boolean {
  return (values ?? []).some((value) => value === "*" || value === wanted);
}

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { envtestAssets } from "../../support/envtest-assets.js";
import { runCommand } from "../../support/envtest-process.js";

/**
 * The sync's manifests as an operator applies them: `kubectl kustomize deploy/sync` (the base every cluster
 * overlay builds on), every object's namespace set, so a test applies the lot in one go.
 */
const DEPLOY_DIR = fileURLToPath(new URL("../../../deploy/", import.meta.url));
const DEFAULT_NAMESPACE = "edgeslice";
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding"]);

export interface KubeManifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string; [key: string]: unknown };
  readonly [key: string]: unknown;
}

export interface DeployManifests {
  /** The sync's ServiceAccount as the manifests define it. */
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  /** Every object, its namespace set, the namespace itself first. */
  readonly objects: readonly KubeManifest[];
  /** The rules the sync needs to read Services and EndpointSlices (from its ClusterRole). */
  readonly readRules: readonly unknown[];
}

export async function renderDeploy(): Promise<DeployManifests> {
  const text = await runCommand(envtestAssets()?.kubectl ?? "kubectl", [
    "kustomize",
    join(DEPLOY_DIR, "sync"),
  ]);
  const documents = parseAllDocuments(text)
    .map((document) => document.toJSON() as KubeManifest | null)
    .filter((object): object is KubeManifest => object !== null && typeof object.kind === "string");
  const serviceAccount = documents.find((object) => object.kind === "ServiceAccount");
  if (!serviceAccount) throw new Error("deploy/ defines no ServiceAccount");
  const namespace = serviceAccount.metadata.namespace ?? DEFAULT_NAMESPACE;
  const objects = documents.map((object) =>
    CLUSTER_SCOPED.has(object.kind) || object.metadata.namespace
      ? object
      : { ...object, metadata: { ...object.metadata, namespace } },
  );
  const hasNamespace = objects.some((object) => object.kind === "Namespace");
  const clusterRole = objects.find((object) => object.kind === "ClusterRole");
  return {
    serviceAccount: { namespace, name: serviceAccount.metadata.name },
    objects: hasNamespace
      ? objects
      : [{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, ...objects],
    readRules: (clusterRole?.rules as unknown[] | undefined) ?? [],
  };
}

/**
 * The namespaced mode: the sync's read rules as a Role + RoleBinding in each watched namespace, and nothing
 * cluster-wide, for a sync run with WATCH_NAMESPACES.
 */
export function namespacedReadRbac(deploy: DeployManifests, namespaces: readonly string[]): KubeManifest[] {
  const subject = { kind: "ServiceAccount", ...deploy.serviceAccount };
  return namespaces.flatMap((namespace) => [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "edgeslice-sync-read", namespace },
      rules: deploy.readRules,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "edgeslice-sync-read", namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "edgeslice-sync-read" },
      subjects: [subject],
    },
  ]);
}

/** Everything but the cluster-wide read access (ClusterRole and its binding). */
export function withoutClusterRbac(deploy: DeployManifests): KubeManifest[] {
  return deploy.objects.filter((object) => !object.kind.startsWith("ClusterRole"));
}

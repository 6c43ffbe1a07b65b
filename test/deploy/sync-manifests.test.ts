import * as v from "valibot";
import { beforeAll, describe, expect, it } from "vitest";
import { ClusterNameSchema } from "../../store/names.js";
import {
  container,
  type Deployment,
  envOf,
  examples,
  type KubeObject,
  only,
  render,
} from "./support/render.js";

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}
interface Binding extends KubeObject {
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects: { readonly kind: string; readonly name: string; readonly namespace: string }[];
}

const CLUSTERS = ["east", "west"] as const;
let base: KubeObject[] = [];
const overlays = new Map<string, KubeObject[]>();

beforeAll(async () => {
  base = await render("deploy/sync");
  for (const cluster of CLUSTERS) overlays.set(cluster, await render(`deploy/overlays/${cluster}`));
});

function overlay(cluster: string): KubeObject[] {
  const objects = overlays.get(cluster);
  if (!objects) throw new Error(`deploy/overlays/${cluster} was not rendered`);
  return objects;
}

describe("deploy/sync", () => {
  it("grants read on what it translates and update on its status subresources, nothing else cluster-wide", () => {
    const role = only(base, "ClusterRole");
    const read = ["get", "list", "watch"];
    const gateway = "gateway.networking.k8s.io";

    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["services"], verbs: read },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: read },
      { apiGroups: [""], resources: ["namespaces"], verbs: read },
      {
        apiGroups: [gateway],
        resources: [
          "gatewayclasses",
          "gateways",
          "httproutes",
          "grpcroutes",
          "tlsroutes",
          "referencegrants",
          "backendtlspolicies",
        ],
        verbs: read,
      },
      // TLS Secrets for HTTPS listeners' certificateRefs: read, never written.
      { apiGroups: [""], resources: ["secrets"], verbs: read },
      // CA bundles for Gateways' client certificate validation and BackendTLSPolicies: read, never written.
      { apiGroups: [""], resources: ["configmaps"], verbs: read },
      {
        apiGroups: [gateway],
        resources: [
          "gatewayclasses/status",
          "gateways/status",
          "httproutes/status",
          "grpcroutes/status",
          "tlsroutes/status",
          "backendtlspolicies/status",
        ],
        verbs: ["update"],
      },
      { apiGroups: ["networking.k8s.io"], resources: ["ingressclasses", "ingresses"], verbs: read },
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["update"] },
    ] satisfies Rule[]);
    // The only writes are status subresources: never a spec, never a Secret, Pod or Endpoints.
    for (const rule of role.rules as Rule[]) {
      if (rule.verbs.some((verb) => !read.includes(verb))) {
        expect(rule.verbs).toEqual(["update"]);
        for (const resource of rule.resources) expect(resource).toMatch(/\/status$/);
      }
    }
  });

  it("grants the Lease verbs of leader election in the sync's own namespace only", () => {
    const role = only(base, "Role");

    expect(role.rules).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
    ] satisfies Rule[]);
    expect(role.metadata.namespace).toBe(only(base, "Deployment").metadata.namespace);
  });

  it("binds both roles to the ServiceAccount the Deployment runs as, in its namespace", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const account = only(base, "ServiceAccount");
    const subject = { kind: "ServiceAccount", name: account.metadata.name, namespace: "edgeslice" };

    expect(deployment.spec.template.spec.serviceAccountName).toBe(account.metadata.name);
    for (const [kind, role] of [
      ["ClusterRoleBinding", "ClusterRole"],
      ["RoleBinding", "Role"],
    ] as const) {
      const binding = only<Binding>(base, kind);
      expect(binding.roleRef).toMatchObject({ kind: role, name: only(base, role).metadata.name });
      expect(binding.subjects).toEqual([subject]);
    }
  });

  it("runs two replicas probed on SYNC_PORT: /livez for liveness and start-up, /readyz for readiness", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const main = container(deployment);
    const syncPort = Number(envOf(deployment).get("SYNC_PORT")?.value);
    const probed = main.ports?.find((port) => port.name === main.readinessProbe?.httpGet?.port);

    expect((deployment.spec as { replicas?: number }).replicas).toBe(2);
    expect(probed?.containerPort).toBe(syncPort);
    expect(main.livenessProbe?.httpGet).toEqual({ path: "/livez", port: probed?.name });
    expect(main.startupProbe?.httpGet).toEqual({ path: "/livez", port: probed?.name });
    expect(main.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: probed?.name });
    expect(envOf(deployment).get("POD_NAME")).toBeDefined();
    expect(envOf(deployment).get("POD_NAMESPACE")).toBeDefined();
  });

  it("keeps a replica through voluntary disruptions: a PodDisruptionBudget lets drains take one at a time", () => {
    const deployment = only<Deployment>(base, "Deployment");
    const pdb = only(base, "PodDisruptionBudget");
    const spec = pdb.spec as { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };

    expect(spec.maxUnavailable).toBe(1);
    expect((deployment.spec as { replicas?: number }).replicas).toBeGreaterThan(spec.maxUnavailable);
    expect(spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    for (const cluster of CLUSTERS)
      expect(only(overlay(cluster), "PodDisruptionBudget").metadata.name).toBe(pdb.metadata.name);
  });

  it("leaves CLUSTER_NAME empty, which the sync refuses at start, for an overlay to set", () => {
    const name = envOf(only<Deployment>(base, "Deployment")).get("CLUSTER_NAME")?.value;

    expect(name).toBe("");
    expect(v.is(ClusterNameSchema, name)).toBe(false);
  });
});

describe.each(CLUSTERS)("deploy/overlays/%s", (cluster) => {
  it("is the base sync with CLUSTER_NAME set to the cluster, and creates the namespace", () => {
    const deployment = only<Deployment>(overlay(cluster), "Deployment");
    const baseDeployment = only<Deployment>(base, "Deployment");
    const name = envOf(deployment).get("CLUSTER_NAME")?.value;

    expect(name).toBe(cluster);
    expect(v.is(ClusterNameSchema, name)).toBe(true);
    expect([...envOf(deployment).keys()]).toEqual([...envOf(baseDeployment).keys()]);
    expect(only(overlay(cluster), "Namespace").metadata.name).toBe("edgeslice");
    expect(overlay(cluster).map((object) => object.kind)).not.toContain("Secret");
  });

  it("shows the shape of its own Redis Secret: the cluster's ACL user, the name REDIS_URL reads", () => {
    const secretRef = envOf(only<Deployment>(overlay(cluster), "Deployment")).get("REDIS_URL")?.valueFrom
      ?.secretKeyRef;
    const example = examples().find(
      (file) => file.file === `deploy/overlays/${cluster}/redis-secret.example.yaml`,
    );
    const secret = example?.objects.find((object) => object.kind === "Secret") as
      | (KubeObject & { stringData: Record<string, string> })
      | undefined;

    expect(secret?.metadata).toMatchObject({ name: secretRef?.name, namespace: "edgeslice" });
    const url = new URL(secret?.stringData[secretRef?.key ?? ""] ?? "");
    expect(url.username).toBe(`edgeslice-sync-${cluster}`);
    expect(url.protocol).toBe("rediss:");
  });
});

import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeOn, requiringGatewayApi } from "../control-plane/control-plane.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";
import { installGatewayApi } from "../envtest/support/crds.js";
import { type Envtest, startEnvtest } from "../support/envtest.js";
import { envtestAssets } from "../support/envtest-assets.js";
import { examples, type KubeObject, kustomizations, parseYaml, ROOT, render } from "./support/render.js";

/** Objects later ones may rely on (RBAC, the namespace): applied for real; everything else as a dry run. */
const APPLIED_FOR_REAL = new Set([
  "Namespace",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
]);
const FIELD_MANAGER = "edgeslice-deploy-test";
/** The route kinds examples/ declares (03-gateway.yaml, 04-ingress.yaml). */
const ROUTE_KINDS = ["GatewayClass", "Gateway", "HTTPRoute", "IngressClass", "Ingress"];

/** Server-side apply of `objects` (a List), for real or as `--dry-run=server`; resolves kubectl's output. */
function serverSideApply(envtest: Envtest, objects: readonly KubeObject[], dryRun: boolean): Promise<string> {
  const args = ["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", "-"];
  return envtest.kubectl(dryRun ? [...args, "--dry-run=server"] : args, {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
  });
}

/**
 * What only a real kube-apiserver can show: the manifests accepted by server-side apply, the Gateway API objects
 * by the v1.6.1 CRDs' own validation (CEL rules included). What deploy/'s RBAC grants the sync is checked against
 * both the real one and the fake (test/control-plane/cases/rbac.case.ts).
 */
describeOn(requiringGatewayApi(KUBE_APISERVER), "deploy/ accepted by server-side apply", () => {
  let envtest: Envtest;

  beforeAll(async () => {
    envtest = await startEnvtest();
    await envtest.kubectl(["create", "namespace", "edgeslice"]);
    await installGatewayApi(envtest);
  });

  afterAll(async () => {
    await envtest?.close();
  });

  it.each(kustomizations())("accepts every object %s renders (server-side apply)", async (folder) => {
    const objects = await render(folder);
    const rbac = objects.filter((object) => APPLIED_FOR_REAL.has(object.kind));

    if (rbac.length > 0) await serverSideApply(envtest, rbac, false);
    const output = await serverSideApply(envtest, objects, true);

    for (const object of objects) {
      expect(output).toContain(`${object.metadata.name} serverside-applied (server dry run)`);
    }
  });

  it.each(examples().map((example) => example.file))("accepts the objects of %s", async (file) => {
    const objects = examples().find((example) => example.file === file)?.objects ?? [];

    expect(objects.length).toBeGreaterThan(0);
    await serverSideApply(envtest, objects, true);
  });

  it("accepts the Gateway API and Ingress objects of examples/ (the v1.6.1 CRDs' validation)", async () => {
    await envtest.kubectl(["create", "namespace", "demo"]);
    const objects = readdirSync("examples")
      .sort()
      .flatMap((file) => parseYaml(readFileSync(join("examples", file), "utf8")))
      // Services and slices are left out: envtest is IPv4-only, and the API server refuses the loopback
      // endpoint addresses the all-in-one's slices list.
      .filter((object) => ROUTE_KINDS.includes(object.kind));

    expect([...new Set(objects.map((object) => object.kind))].sort()).toEqual([...ROUTE_KINDS].sort());
    const output = await serverSideApply(envtest, objects, true);
    for (const object of objects) {
      expect(output).toContain(`${object.metadata.name} serverside-applied (server dry run)`);
    }
  });

  // Last: it creates for real what the tests above only dry-run.
  it("installs with deploy/apply.sh, for real, in the order it applies: classes, sync, routers", async () => {
    const kubectl = `${envtestAssets()?.kubectl ?? "kubectl"} --kubeconfig ${envtest.kubeconfigPath()}`;
    await promisify(execFile)("deploy/apply.sh", ["deploy/overlays/east", "deploy/overlays/east-router"], {
      cwd: ROOT,
      env: { ...process.env, KUBECTL: kubectl },
    });

    expect(await envtest.kubectl(["get", "gatewayclass,ingressclass", "-o", "name"])).toMatch(
      /gatewayclass\S*\/edgeslice\n.*ingressclass\S*\/edgeslice/s,
    );
    expect(await envtest.kubectl(["-n", "edgeslice", "get", "deployments", "-o", "name"])).toMatch(
      /deployment\S*\/edgeslice-router\n.*deployment\S*\/edgeslice-sync/s,
    );
  });
});

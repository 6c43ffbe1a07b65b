import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENVTEST_AVAILABLE,
  ENVTEST_SKIP_LINE,
  type Envtest,
  startEnvtest,
  untilAllowed,
} from "../support/envtest.js";
import { CommandFailed } from "../support/envtest-process.js";
import { examples, type KubeObject, kustomizations, render } from "./support/render.js";

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

/** Server-side apply of `objects` (a List), for real or as `--dry-run=server`; resolves kubectl's output. */
function serverSideApply(envtest: Envtest, objects: readonly KubeObject[], dryRun: boolean): Promise<string> {
  const args = ["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", "-"];
  return envtest.kubectl(dryRun ? [...args, "--dry-run=server"] : args, {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
  });
}

/** `kubectl auth can-i` as the sync's ServiceAccount: true for "yes" (kubectl exits 1 for "no"). */
async function syncMay(envtest: Envtest, args: readonly string[]): Promise<boolean> {
  try {
    return (await envtest.kubectl(["auth", "can-i", ...args], { identity: "sync" })).trim() === "yes";
  } catch (error) {
    if (error instanceof CommandFailed && error.stdout.trim() === "no") return false;
    throw error;
  }
}

// Says why this file skips when run alone (test/envtest/harness.test.ts says it for its folder).
if (!ENVTEST_AVAILABLE) console.warn(ENVTEST_SKIP_LINE);

describe.skipIf(!ENVTEST_AVAILABLE)("deploy/ on a real kube-apiserver (envtest)", () => {
  let envtest: Envtest;

  beforeAll(async () => {
    // The harness's "sync" identity is the ServiceAccount deploy/sync defines.
    envtest = await startEnvtest({ serviceAccount: { namespace: "edgeslice", name: "edgeslice-sync" } });
    await envtest.kubectl(["create", "namespace", "edgeslice"]);
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

  it("lets the sync's ServiceAccount read Services and EndpointSlices and hold its Lease, nothing more", async () => {
    await serverSideApply(
      envtest,
      (await render("deploy/sync")).filter((o) => APPLIED_FOR_REAL.has(o.kind)),
      false,
    );
    await untilAllowed(envtest, "/apis/discovery.k8s.io/v1/endpointslices");

    for (const verb of ["get", "list", "watch"]) {
      expect(await syncMay(envtest, [verb, "services", "--all-namespaces"])).toBe(true);
      expect(await syncMay(envtest, [verb, "endpointslices.discovery.k8s.io", "--all-namespaces"])).toBe(
        true,
      );
    }
    for (const verb of ["get", "create", "update"]) {
      expect(await syncMay(envtest, [verb, "leases.coordination.k8s.io", "-n", "edgeslice"])).toBe(true);
    }
    expect(await syncMay(envtest, ["create", "leases.coordination.k8s.io", "-n", "default"])).toBe(false);
    expect(await syncMay(envtest, ["update", "services", "-n", "edgeslice"])).toBe(false);
    expect(await syncMay(envtest, ["list", "secrets", "--all-namespaces"])).toBe(false);
    expect(await syncMay(envtest, ["list", "endpoints", "--all-namespaces"])).toBe(false);
    expect(await syncMay(envtest, ["list", "pods", "--all-namespaces"])).toBe(false);
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installGatewayApi } from "../envtest/support/crds.js";
import {
  ENVTEST_AVAILABLE,
  ENVTEST_SKIP_LINE,
  type Envtest,
  startEnvtest,
  untilAllowed,
} from "../support/envtest.js";
import { CommandFailed } from "../support/envtest-process.js";
import { examples, type KubeObject, kustomizations, parseYaml, render } from "./support/render.js";

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

  it("lets the sync's ServiceAccount read what it translates, update route status and hold its Lease, nothing more", async () => {
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
    // kubectl can-i resolves a resource through discovery: the Gateway API CRDs are installed above.
    for (const resource of [
      "namespaces",
      "gatewayclasses.gateway.networking.k8s.io",
      "gateways.gateway.networking.k8s.io",
      "httproutes.gateway.networking.k8s.io",
      "referencegrants.gateway.networking.k8s.io",
      "ingressclasses.networking.k8s.io",
      "ingresses.networking.k8s.io",
    ]) {
      expect(await syncMay(envtest, ["list", resource, "--all-namespaces"]), resource).toBe(true);
    }
    for (const [resource, name] of [
      ["httproutes.gateway.networking.k8s.io", "web"],
      ["gateways.gateway.networking.k8s.io", "edge"],
      ["ingresses.networking.k8s.io", "site"],
    ] as const) {
      expect(
        await syncMay(envtest, ["update", `${resource}/${name}`, "--subresource=status", "-n", "shop"]),
      ).toBe(true);
      expect(await syncMay(envtest, ["update", `${resource}/${name}`, "-n", "shop"]), resource).toBe(false);
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

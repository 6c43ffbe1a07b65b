import { existsSync, readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import type { Envtest } from "../../support/envtest.js";
import { envtestAssets } from "../../support/envtest-assets.js";

/** The Gateway API v1.6.1 standard CRDs next to the envtest binaries (their CEL validation is the real one). */
export function gatewayApiCrdsPath(): string | undefined {
  const assets = envtestAssets();
  const path = assets ? `${assets.dir}/crds/gateway-api-v1.6.1-standard.yaml` : undefined;
  return path && existsSync(path) ? path : undefined;
}

/**
 * The Gateway API resources whose CRDs the control-plane tests install, on the real apiserver and on the fake
 * alike: not GRPCRoute (each CRD costs the apiserver an OpenAPI rebuild), so its kind stays unserved there.
 */
export const INSTALLED_GATEWAY_API_RESOURCES = [
  "gatewayclasses",
  "gateways",
  "httproutes",
  "referencegrants",
];

const GATEWAY_API_CRDS = INSTALLED_GATEWAY_API_RESOURCES.map(
  (resource) => `${resource}.gateway.networking.k8s.io`,
);

/**
 * Installs the Gateway API CRDs of INSTALLED_GATEWAY_API_RESOURCES and waits until they are Established. `kubectl create`, not apply: the HTTPRoute CRD is larger than the
 * last-applied-configuration annotation may be (256 KiB).
 */
export async function installGatewayApi(envtest: Envtest): Promise<void> {
  const path = gatewayApiCrdsPath();
  if (!path) throw new Error("the Gateway API CRDs are not next to the envtest assets");
  const crds = parseAllDocuments(readFileSync(path, "utf8"))
    .map((document) => document.toJSON() as { metadata?: { name?: string } } | null)
    .filter((crd) => GATEWAY_API_CRDS.includes(crd?.metadata?.name ?? ""));
  if (crds.length !== GATEWAY_API_CRDS.length) throw new Error(`${path} lacks some of ${GATEWAY_API_CRDS}`);
  await envtest.kubectl(["create", "-f", "-"], {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items: crds }),
  });
  await envtest.kubectl([
    "wait",
    "--for=condition=Established",
    "--timeout=30s",
    ...GATEWAY_API_CRDS.map((name) => `crd/${name}`),
  ]);
}

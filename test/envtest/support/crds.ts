import { existsSync } from "node:fs";
import type { Envtest } from "../../support/envtest.js";
import { envtestAssets } from "../../support/envtest-assets.js";

/** The Gateway API v1.6.1 standard CRDs next to the envtest binaries (their CEL validation is the real one). */
export function gatewayApiCrdsPath(): string | undefined {
  const assets = envtestAssets();
  const path = assets ? `${assets.dir}/crds/gateway-api-v1.6.1-standard.yaml` : undefined;
  return path && existsSync(path) ? path : undefined;
}

const GATEWAY_API_CRDS = [
  "gatewayclasses.gateway.networking.k8s.io",
  "gateways.gateway.networking.k8s.io",
  "httproutes.gateway.networking.k8s.io",
  "referencegrants.gateway.networking.k8s.io",
];

/**
 * Installs the Gateway API CRDs and waits until they are Established. `kubectl create`, not apply: the
 * HTTPRoute CRD is larger than the last-applied-configuration annotation may be (256 KiB).
 */
export async function installGatewayApi(envtest: Envtest): Promise<void> {
  const path = gatewayApiCrdsPath();
  if (!path) throw new Error("the Gateway API CRDs are not next to the envtest assets");
  await envtest.kubectl(["create", "-f", path]);
  await envtest.kubectl([
    "wait",
    "--for=condition=Established",
    "--timeout=30s",
    ...GATEWAY_API_CRDS.map((name) => `crd/${name}`),
  ]);
}

import { untilAllowed } from "../../support/envtest.js";
import type { ControlPlane, ControlPlaneKind, ControlPlaneOptions } from "../control-plane.js";
import { renderDeploy } from "./deploy.js";

/**
 * The preamble of the cases that run the sync as deploy/ sets it up: the plane started with deploy/'s
 * ServiceAccount as the sync's identity, deploy/ applied with `objects` after it, and the wait until that
 * identity may list Services and EndpointSlices (an apiserver authorizes a new RoleBinding a moment after it
 * is written).
 */
export async function startDeployedPlane(
  plane: ControlPlaneKind,
  objects: readonly object[],
  options: Omit<ControlPlaneOptions, "serviceAccount"> = {},
): Promise<ControlPlane> {
  const deploy = await renderDeploy();
  const controlPlane = await plane.start({ ...options, serviceAccount: deploy.serviceAccount });
  await controlPlane.apply([...deploy.objects, ...objects]);
  await untilAllowed(controlPlane, "/apis/discovery.k8s.io/v1/endpointslices");
  await untilAllowed(controlPlane, "/api/v1/services");
  return controlPlane;
}

import { HOSTS_ANNOTATION } from "../../sync/translate/exposure.js";
import type { ApplyInput } from "./store.js";

/** Small builders for the Services and EndpointSlices tests put on the fake API server. */

/** A Service with one TCP port named http (80), carrying `annotations` (edgeslice.io/hosts exposes it). */
export function serviceObject(
  namespace: string,
  name: string,
  annotations: Record<string, string> = {},
): ApplyInput {
  return {
    kind: "Service",
    metadata: { name, namespace, annotations },
    spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
  };
}

/** A Service exposed at `hosts` (a comma list, as the annotation takes it). */
export function exposedServiceObject(namespace: string, name: string, hosts: string): ApplyInput {
  return serviceObject(namespace, name, { [HOSTS_ANNOTATION]: hosts });
}

export interface EndpointConditions {
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

export interface SliceOptions {
  /** The one port number every endpoint of the slice listens on (8080 by default). */
  readonly port?: number;
  /** Every endpoint's conditions ({ ready: true } by default). */
  readonly conditions?: EndpointConditions;
}

/**
 * An EndpointSlice of `serviceName` (unlabelled when undefined) with one endpoint per address, on one TCP
 * port named http. Its addressType follows the first address: a slice holds a single family.
 */
export function sliceObject(
  namespace: string,
  name: string,
  serviceName: string | undefined,
  addresses: readonly string[],
  options: SliceOptions = {},
): ApplyInput {
  return {
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace,
      labels: serviceName ? { "kubernetes.io/service-name": serviceName } : {},
    },
    addressType: addresses[0]?.includes(":") ? "IPv6" : "IPv4",
    ports: [{ name: "http", port: options.port ?? 8080, protocol: "TCP" }],
    endpoints: addresses.map((address) => ({
      addresses: [address],
      conditions: options.conditions ?? { ready: true },
    })),
  };
}

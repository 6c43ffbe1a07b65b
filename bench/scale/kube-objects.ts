import type { ApplyInput } from "../../test/fake-kube/store.js";

/**
 * The sync's workload at scale (issue 26): Services of 20 endpoints in one slice, plus a few large Services
 * whose endpoints are spread over many slices, as the EndpointSlice controller splits a big Service.
 */
export const SCALE_NAMESPACE = "scale";

export function scaleServiceName(index: number): string {
  return `svc-${index}`;
}

export function scaleHost(index: number): string {
  return `${scaleServiceName(index)}.scale.example`;
}

export function scaleServiceObject(index: number): ApplyInput {
  return {
    kind: "Service",
    apiVersion: "v1",
    metadata: {
      name: scaleServiceName(index),
      namespace: SCALE_NAMESPACE,
      annotations: { "edgeslice.io/hosts": scaleHost(index) },
    },
    spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
  };
}

/** Slice `slice` of Service `index`, holding `addresses` as ready endpoints. */
export function scaleSliceObject(index: number, slice: number, addresses: readonly string[]): ApplyInput {
  const service = scaleServiceName(index);
  return {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata: {
      name: `${service}-${slice}`,
      namespace: SCALE_NAMESPACE,
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: addresses.map((address, k) => ({
      addresses: [address],
      conditions: { ready: true, serving: true, terminating: false },
      zone: k % 2 === 0 ? "zone-a" : "zone-b",
      targetRef: { kind: "Pod", namespace: SCALE_NAMESPACE, name: `${service}-${slice}-pod-${k}` },
    })),
  };
}

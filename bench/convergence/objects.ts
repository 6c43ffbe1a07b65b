import type { ApplyInput } from "../../test/fake-kube/store.js";

/**
 * The convergence workload: `services` exposed Services in one namespace, each with one IPv4 EndpointSlice of
 * `endpointsPerService` ready endpoints. A change replaces one endpoint's address with a fresh one, so the
 * reader can tell exactly when that change arrived.
 */
export const BENCH_NAMESPACE = "bench";

export function serviceName(index: number): string {
  return `svc-${index}`;
}

export function serviceObject(index: number): ApplyInput {
  const service = {
    kind: "Service",
    apiVersion: "v1",
    metadata: {
      name: serviceName(index),
      namespace: BENCH_NAMESPACE,
      annotations: { "edgeslice.io/hosts": `${serviceName(index)}.bench.example` },
    },
    spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
  };
  return service;
}

/** Addresses of the initial slice: 10.<hi>.<lo>.<k+1>, unique per (service, endpoint). */
export function initialAddress(index: number, endpoint: number): string {
  return `10.${(index >> 8) & 255}.${index & 255}.${endpoint + 1}`;
}

/** A fresh address for change number `change` (from 100.64.0.0/10: never in the initial set). */
export function changedAddress(change: number): string {
  return `100.${64 + ((change >> 16) & 63)}.${(change >> 8) & 255}.${change & 255}`;
}

export function sliceObject(index: number, addresses: readonly string[]): ApplyInput {
  const slice = {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata: {
      name: `${serviceName(index)}-abcde`,
      namespace: BENCH_NAMESPACE,
      labels: {
        "kubernetes.io/service-name": serviceName(index),
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: addresses.map((address, k) => ({
      addresses: [address],
      conditions: { ready: true, serving: true, terminating: false },
      zone: k % 2 === 0 ? "zone-a" : "zone-b",
      targetRef: { kind: "Pod", namespace: BENCH_NAMESPACE, name: `${serviceName(index)}-pod-${k}` },
    })),
  };
  return slice;
}

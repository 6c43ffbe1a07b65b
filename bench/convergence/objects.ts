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

/** The host a Service is annotated with: `svc-<index>.<namespace>.example`. */
export function serviceHost(index: number, namespace = BENCH_NAMESPACE): string {
  return `${serviceName(index)}.${namespace}.example`;
}

export function serviceObject(index: number, namespace = BENCH_NAMESPACE): ApplyInput {
  const service = {
    kind: "Service",
    apiVersion: "v1",
    metadata: {
      name: serviceName(index),
      namespace,
      annotations: { "edgeslice.io/hosts": serviceHost(index, namespace) },
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

/**
 * The EndpointSlice of Service `index` holding `addresses` as ready endpoints. `slice` numbers one of several
 * slices of a large Service, as the EndpointSlice controller splits one (the scale bench); without it, the
 * Service's only slice.
 */
export function sliceObject(
  index: number,
  addresses: readonly string[],
  namespace = BENCH_NAMESPACE,
  slice?: number,
): ApplyInput {
  const name = slice === undefined ? `${serviceName(index)}-abcde` : `${serviceName(index)}-${slice}`;
  const pod = slice === undefined ? serviceName(index) : `${serviceName(index)}-${slice}`;
  const object = {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata: {
      name,
      namespace,
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
      targetRef: { kind: "Pod", namespace, name: `${pod}-pod-${k}` },
    })),
  };
  return object;
}

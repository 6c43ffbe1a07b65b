import type { ApplyInput } from "../../fake-kube/store.js";

/** A Service exposed through `edgeslice.io/hosts` (or with the given annotations), one port named http. */
export function exposedService(
  namespace: string,
  name: string,
  annotations: Record<string, string>,
): ApplyInput {
  const service = {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name, namespace, annotations },
    spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
  };
  return service;
}

/** An IPv4 EndpointSlice of `service` with ready endpoints at the given ip:port pairs. */
export function readySlice(
  namespace: string,
  service: string,
  backends: readonly { ip: string; port: number }[],
  sliceName = `${service}-abc12`,
): ApplyInput {
  const port = backends[0]?.port ?? 8080;
  const slice = {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata: { name: sliceName, namespace, labels: { "kubernetes.io/service-name": service } },
    addressType: "IPv4",
    ports: [{ name: "http", port, protocol: "TCP" }],
    endpoints: backends.map((b) => ({ addresses: [b.ip], conditions: { ready: true } })),
  };
  return slice;
}

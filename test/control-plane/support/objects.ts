/**
 * Objects the control-plane cases put on the apiserver (real or fake). Backends use private and documentation
 * addresses (10.0.0.0/8, 192.0.2.0/24): a real apiserver refuses loopback endpoint addresses, and no test ever
 * sends traffic to these, it only reads what the sync publishes.
 */
export const HOSTS_ANNOTATION = "edgeslice.io/hosts";

export function namespaceObject(name: string): object {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
}

/** A ClusterIP Service with one port named http, exposed at `host` unless host is undefined. */
export function serviceObject(namespace: string, name: string, host: string | undefined): object {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, annotations: host === undefined ? {} : { [HOSTS_ANNOTATION]: host } },
    spec: { ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
  };
}

/** An IPv4 EndpointSlice of `service` with ready endpoints at `addresses`, port 8080. */
export function sliceObject(
  namespace: string,
  service: string,
  addresses: readonly string[],
  name = `${service}-a`,
): object {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace, labels: { "kubernetes.io/service-name": service } },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
  };
}

/** An exposed Service and its slice: `<name>.<namespace>.test` served by `addresses`. */
export function exposedWithSlice(namespace: string, name: string, addresses: readonly string[]): object[] {
  return [
    serviceObject(namespace, name, `${name}.${namespace}.test`),
    sliceObject(namespace, name, addresses),
  ];
}

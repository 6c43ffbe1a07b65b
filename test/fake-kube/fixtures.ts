import type { ApplyInput } from "./store.js";

/** Small builders for the objects tests put on the fake API server. */
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

export function sliceObject(
  namespace: string,
  name: string,
  serviceName: string | undefined,
  addresses: readonly string[],
): ApplyInput {
  return {
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace,
      labels: serviceName ? { "kubernetes.io/service-name": serviceName } : {},
    },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
  };
}

/** Polls `check` until it returns true, or throws after `timeoutMs`: "eventually", never an exact time. */
export async function eventually(check: () => boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

import type { EchoBackend } from "../../e2e/support/echo-backends.js";
import { sliceObject } from "../../fake-kube/fixtures.js";
import type { FakeKube } from "../../fake-kube/server.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { GATEWAY_API, INFRA } from "./conformance-base.js";

/**
 * The objects of the official BackendTLSPolicy tests, written after their manifests: policies, the CA bundle
 * ConfigMaps, and Services whose EndpointSlice points at a loopback backend of the test.
 */
export function backendTlsPolicyObject(name: string, spec: Record<string, unknown>): ApplyInput {
  return {
    apiVersion: GATEWAY_API,
    kind: "BackendTLSPolicy",
    metadata: { name, namespace: INFRA, generation: 1 },
    spec,
  };
}

/** A policy on Service `service` (its port `sectionName`, else all), trusting ConfigMap `ca`, for `hostname`. */
export function caPolicy(
  name: string,
  service: string,
  options: {
    readonly ca?: string;
    readonly hostname?: string;
    readonly sectionName?: string;
    readonly extra?: Record<string, unknown>;
  } = {},
): ApplyInput {
  const target = {
    group: "",
    kind: "Service",
    name: service,
    ...(options.sectionName ? { sectionName: options.sectionName } : {}),
  };
  return backendTlsPolicyObject(name, {
    targetRefs: [target],
    validation: {
      caCertificateRefs: [{ group: "", kind: "ConfigMap", name: options.ca ?? "tls-checks-ca-certificate" }],
      hostname: options.hostname ?? "abc.example.com",
      ...options.extra,
    },
  });
}

export function configMapObject(name: string, data: Record<string, string>): ApplyInput {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: INFRA }, data };
}

/** Service `name` in the infra namespace with `ports` (name, port), its one endpoint at `backend`. */
export function serviceAt(
  name: string,
  backend: Pick<EchoBackend, "ip" | "port">,
  ports: readonly { readonly name: string; readonly port: number; readonly appProtocol?: string }[],
): ApplyInput[] {
  return [
    {
      kind: "Service",
      metadata: { name, namespace: INFRA },
      spec: {
        type: "ClusterIP",
        ports: ports.map((port) => ({ protocol: "TCP", targetPort: 8443, ...port })),
      },
    },
    // Slice ports are matched to the Service's by name: each named port reaches the backend.
    {
      ...sliceObject(INFRA, `${name}-1`, name, [backend.ip], { port: backend.port }),
      ports: ports.map((port) => ({ name: port.name, port: backend.port, protocol: "TCP" })),
    },
  ];
}

/** Each of our `status.ancestors` entries of BackendTLSPolicy `name` as `gateway: Type=Status/Reason...`. */
export function policyAncestors(kube: FakeKube, name: string): string[] {
  type Entry = {
    ancestorRef: { name: string };
    conditions: { type: string; status: string; reason: string }[];
  };
  const status = kube.get("BackendTLSPolicy", INFRA, name)?.status as { ancestors?: Entry[] } | undefined;
  return (status?.ancestors ?? []).map(
    (entry) =>
      `${entry.ancestorRef.name}: ${entry.conditions.map((item) => `${item.type}=${item.status}/${item.reason}`).join(" ")}`,
  );
}

/** Reads the policy's ancestors until `done` holds for them, or after `timeoutMs` (the leader writes status late). */
export async function untilAncestors(
  kube: FakeKube,
  name: string,
  done: (lines: readonly string[]) => boolean,
  timeoutMs = 5_000,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (!done(policyAncestors(kube, name)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return policyAncestors(kube, name);
}

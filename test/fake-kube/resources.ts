/** The resources the fake API server serves, and how their REST paths look (Kubernetes API conventions). */
export type FakeKind = "Service" | "EndpointSlice" | "Lease";

export interface ResourceInfo {
  readonly kind: FakeKind;
  readonly apiVersion: string;
  readonly plural: string;
  readonly listKind: string;
}

export const RESOURCES: Readonly<Record<FakeKind, ResourceInfo>> = {
  Service: { kind: "Service", apiVersion: "v1", plural: "services", listKind: "ServiceList" },
  EndpointSlice: {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    plural: "endpointslices",
    listKind: "EndpointSliceList",
  },
  Lease: { kind: "Lease", apiVersion: "coordination.k8s.io/v1", plural: "leases", listKind: "LeaseList" },
};

/** What a request path addresses: a collection (all namespaces or one) or a single object. */
export interface ResourcePath {
  readonly kind: FakeKind;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

const CORE_PATH = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?(services)(?:\/([^/]+))?$/;
const GROUP_PATH =
  /^\/apis\/(discovery\.k8s\.io|coordination\.k8s\.io)\/v1\/(?:namespaces\/([^/]+)\/)?(endpointslices|leases)(?:\/([^/]+))?$/;

export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const core = CORE_PATH.exec(pathname);
  if (core) return { kind: "Service", namespace: decode(core[1]), name: decode(core[3]) };
  const group = GROUP_PATH.exec(pathname);
  if (!group) return undefined;
  const [, apiGroup, namespace, plural, name] = group;
  if (apiGroup === "discovery.k8s.io" && plural === "endpointslices") {
    return { kind: "EndpointSlice", namespace: decode(namespace), name: decode(name) };
  }
  if (apiGroup === "coordination.k8s.io" && plural === "leases") {
    return { kind: "Lease", namespace: decode(namespace), name: decode(name) };
  }
  return undefined;
}

function decode(segment: string | undefined): string | undefined {
  return segment === undefined ? undefined : decodeURIComponent(segment);
}

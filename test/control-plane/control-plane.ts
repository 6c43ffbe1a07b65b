import { describe, it } from "vitest";

/**
 * A Kubernetes control plane as the sync's tests drive it, implemented twice: by a real kube-apiserver on etcd
 * (envtest-plane.ts, where KUBEBUILDER_ASSETS holds one) and by the fake API server (fake-plane.ts, always).
 * The cases in cases/ run the same test bodies against both ("one contract suite per interface, run against
 * every implementation"); each behaviour the fake shows follows what the real one was observed to do
 * (../shared/envtest/README.md).
 */
export type Identity = "admin" | "sync";

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/** Objects as a user applies them: YAML or JSON text, one object, or several. */
export type Manifests = string | object | readonly object[];

/** What a SelfSubjectAccessReview asks (authorization.k8s.io/v1 resourceAttributes). */
export interface AccessQuestion {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

export interface ControlPlane {
  readonly url: string;
  readonly serviceAccount: ServiceAccountRef;
  /** RBAC user of the sync: system:serviceaccount:<ns>:<name>. */
  readonly syncUser: string;
  /** A kubeconfig file for `identity` (admin: system:masters; sync: the ServiceAccount, RBAC decides). */
  kubeconfigPath(identity?: Identity): string;
  /** Creates or updates, as admin (`kubectl apply`). */
  apply(input: Manifests): Promise<void>;
  /** Deletes one object as admin; `kind` as kubectl names it (service, endpointslice, httproute...). */
  remove(kind: string, namespace: string | undefined, name: string): Promise<void>;
  /** Writes an object's status subresource as admin (as another controller would). */
  writeStatus(kind: string, namespace: string, name: string, status: object): Promise<void>;
  /** GET `path` with `identity`'s token. */
  get(path: string, identity?: Identity): Promise<{ status: number; body: string }>;
  /** One request with a JSON body (or none) and `identity`'s token (admin by default). */
  send(
    method: "GET" | "POST" | "PUT",
    path: string,
    options?: { identity?: Identity; body?: unknown },
  ): Promise<{ status: number; body: string }>;
  /** A SelfSubjectAccessReview as `identity`: may it do that? */
  may(identity: Identity, question: AccessQuestion): Promise<boolean>;
  /** Kills the apiserver (connections cut, watches too); the objects are kept. */
  stopApiserver(): Promise<void>;
  /**
   * Serves again on the same URL, once ready (a new process: its request counters start from zero); RBAC
   * answers 403 for about a second more.
   */
  startApiserver(): Promise<void>;
  readonly apiserverRunning: boolean;
  /** Another apiserver on the same storage, to change the cluster while this one is down. Stop it after. */
  startPeer(): Promise<PeerApiserver>;
  /** Compacts the storage at its current revision (resolved): a watch resumed from before it gets 410 Gone. */
  compact(): Promise<number>;
  /**
   * apiserver_request_total summed over codes for `verb` (LIST, WATCH, GET...) and `resource`, optionally of
   * one `scope` ("cluster", "namespace", "resource"). A WATCH is counted when it ends.
   */
  requestCount(verb: string, resource: string, scope?: string): Promise<number>;
  /** Installs the Gateway API CRDs the sync reads and waits until they are served. */
  installGatewayApi(): Promise<void>;
  close(): Promise<void>;
}

export interface PeerApiserver {
  apply(input: Manifests): Promise<void>;
  remove(kind: string, namespace: string | undefined, name: string): Promise<void>;
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** The ServiceAccount the "sync" identity stands for; default edgeslice/edgeslice-sync (deploy/). */
  readonly serviceAccount?: ServiceAccountRef;
  /** False: watches go to storage directly, so compaction shows on resumed watches (real apiserver only). */
  readonly watchCache?: boolean;
}

/** One implementation: its name in test titles, and why it cannot run here, if it cannot. */
export interface ControlPlaneKind {
  readonly name: string;
  /** Undefined when it can run; otherwise the one line saying why not. */
  readonly unavailable: string | undefined;
  /** Whether the Gateway API CRDs can be installed (the real one needs their YAML next to its binaries). */
  readonly gatewayApi: boolean;
  start(options?: ControlPlaneOptions): Promise<ControlPlane>;
}

/**
 * `describe(title on <plane>)`; when the plane cannot run here, one skipped test whose title says why, and the
 * same line on stderr, so a run without it says so in its output instead of passing silently.
 */
export function describeOn(plane: ControlPlaneKind, title: string, body: () => void): void {
  const unavailable = plane.unavailable;
  if (unavailable === undefined) {
    describe(`${title} (${plane.name})`, body);
    return;
  }
  console.warn(unavailable);
  describe(`${title} (${plane.name})`, () => {
    it.skip(unavailable, () => {});
  });
}

/** `plane`, or where it lacks what a case needs (`capable` false), the plane unavailable for that `reason`. */
export function requiring(plane: ControlPlaneKind, capable: boolean, reason: string): ControlPlaneKind {
  if (capable || plane.unavailable !== undefined) return plane;
  return { ...plane, unavailable: `${plane.name} tests skipped: ${reason}` };
}

/** `plane`, or unavailable when the Gateway API CRDs cannot be installed on it. */
export function requiringGatewayApi(plane: ControlPlaneKind): ControlPlaneKind {
  return requiring(
    plane,
    plane.gatewayApi,
    "the Gateway API v1.6.1 CRDs are not in crds/ next to the envtest assets",
  );
}

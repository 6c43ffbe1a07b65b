import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { INSTALLED_GATEWAY_API_RESOURCES } from "../envtest/support/crds.js";
import { GATEWAY_API_KINDS } from "../fake-kube/crd-serving.js";
import { kindNamed, objectPath, RESOURCES } from "../fake-kube/resources.js";
import { startFakeKube } from "../fake-kube/server.js";
import { namespaceFor } from "../fake-kube/store.js";
import { sumRequests } from "../support/apiserver-metrics.js";
import { writeKubeconfig } from "../support/envtest-access.js";
import type { ControlPlane, ControlPlaneKind, Identity, ServiceAccountRef } from "./control-plane.js";
import { manifestObjects, mergePatch } from "./manifest-objects.js";

/**
 * The fake API server (test/fake-kube/) as a ControlPlane, set up as the envtest harness sets up the real one:
 * an admin in system:masters and the sync's ServiceAccount as static tokens, RBAC deciding for the latter, the
 * namespaces kube-apiserver creates, no Gateway API until installed. As the real one (../shared/envtest/
 * README.md), RBAC answers 403 for about a second after each start, and a restart serves the CRDs' kinds a
 * moment after the built-in ones (503 with Retry-After: 5 meanwhile, test/fake-kube/crd-serving.ts); the
 * Gateway API CRDs installed are the envtest harness's (no GRPCRoute).
 */
const STARTUP_FORBIDDEN_MS = 1_000;
const CRDS_LATE_MS = 1_000;
const DEFAULT_SERVICE_ACCOUNT = { namespace: "edgeslice", name: "edgeslice-sync" };
const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

export const FAKE_APISERVER: ControlPlaneKind = {
  name: "fake API server",
  unavailable: undefined,
  gatewayApi: true,
  start: (options = {}) => startFakePlane(options.serviceAccount ?? DEFAULT_SERVICE_ACCOUNT),
};

async function startFakePlane(serviceAccount: ServiceAccountRef): Promise<ControlPlane> {
  const syncUser = `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`;
  const tokens: Record<Identity, string> = { admin: token(), sync: token() };
  const kube = await startFakeKube({
    users: [
      { token: tokens.admin, name: "fake-admin", groups: ["system:masters"] },
      {
        token: tokens.sync,
        name: syncUser,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${serviceAccount.namespace}`],
      },
    ],
    forbiddenForMs: STARTUP_FORBIDDEN_MS,
    gatewayApi: false,
  });
  for (const name of SYSTEM_NAMESPACES) kube.apply({ kind: "Namespace", metadata: { name } });
  const dir = mkdtempSync(join(tmpdir(), "edgeslice-fake-plane-"));
  const kubeconfigs: Record<Identity, string> = {
    admin: join(dir, "kubeconfig-admin.json"),
    sync: join(dir, "kubeconfig-sync.json"),
  };
  writeKubeconfig(kubeconfigs.admin, kube.url, "fake-admin", tokens.admin);
  writeKubeconfig(kubeconfigs.sync, kube.url, syncUser, tokens.sync);
  // A new connection per request: one kept alive across a stop would be a connection the stop cut.
  const dispatcher = new Agent({ pipelining: 0 });
  const send = async (method: "GET" | "POST" | "PUT", path: string, identity: Identity, body?: unknown) => {
    const response = await request(`${kube.url}${path}`, {
      method,
      dispatcher,
      headers: {
        authorization: `Bearer ${tokens[identity]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: await response.body.text() };
  };

  // Writes go to the store directly; the peer's always can, this apiserver's only while it serves (as kubectl).
  const serving = () => {
    if (!kube.running) throw new Error("connection refused: the apiserver is stopped");
  };
  const applyToStore = async (input: Parameters<ControlPlane["apply"]>[0]) => {
    for (const object of manifestObjects(input)) kube.apply(object);
  };
  const removeFromStore = async (kind: string, namespace: string | undefined, name: string) => {
    const fakeKind = kindNamed(kind);
    if (!fakeKind) throw new Error(`the fake API server does not serve ${kind}`);
    if (!kube.remove(fakeKind, namespaceFor(fakeKind, namespace), name))
      throw new Error(`${kind} ${namespace}/${name} not found`);
  };

  return {
    url: kube.url,
    serviceAccount,
    syncUser,
    kubeconfigPath: (identity = "admin") => kubeconfigs[identity],
    async apply(input) {
      serving();
      await applyToStore(input);
    },
    async remove(kind, namespace, name) {
      serving();
      await removeFromStore(kind, namespace, name);
    },
    async writeStatus(kind, namespace, name, status) {
      const fakeKind = kindNamed(kind);
      const current = fakeKind && kube.get(fakeKind, namespace, name);
      if (!fakeKind || !current) throw new Error(`${kind} ${namespace}/${name} not found`);
      const path = objectPath(fakeKind, namespace, name, "status");
      const written = await send("PUT", path, "admin", {
        ...current,
        status: mergePatch(current.status, status),
      });
      if (written.status !== 200) throw new Error(`PUT ${path}: ${written.status} ${written.body}`);
    },
    get: (path, identity = "admin") => send("GET", path, identity),
    send: (method, path, options = {}) => send(method, path, options.identity ?? "admin", options.body),
    async may(identity, question) {
      const review = {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: question },
      };
      const answer = await send(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        identity,
        review,
      );
      if (answer.status !== 201) throw new Error(`SelfSubjectAccessReview: ${answer.status} ${answer.body}`);
      return (JSON.parse(answer.body) as { status?: { allowed?: boolean } }).status?.allowed === true;
    },
    stopApiserver: () => kube.stop({ holdWatchesMs: 0 }),
    startApiserver: () =>
      kube.restart({
        forbiddenForMs: STARTUP_FORBIDDEN_MS,
        gatewayApiLateForMs: STARTUP_FORBIDDEN_MS + CRDS_LATE_MS,
      }),
    get apiserverRunning() {
      return kube.running;
    },
    // Another apiserver on the same etcd writes where this one would: the fake's own store.
    startPeer: async () => ({ apply: applyToStore, remove: removeFromStore, stop: async () => {} }),
    async compact() {
      kube.expireHistory();
      return Number(kube.resourceVersion);
    },
    async requestCount(verb, resource, scope) {
      const metrics = await send("GET", "/metrics", "admin");
      if (metrics.status !== 200) throw new Error(`/metrics answered ${metrics.status}`);
      return sumRequests(metrics.body, verb, resource, scope);
    },
    async installGatewayApi() {
      kube.installGatewayApi(
        GATEWAY_API_KINDS.filter((kind) => INSTALLED_GATEWAY_API_RESOURCES.includes(RESOURCES[kind].plural)),
      );
    },
    close: once(async () => {
      await kube.close();
      await dispatcher.close();
      rmSync(dir, { recursive: true, force: true });
    }),
  };
}

function token(): string {
  return randomBytes(16).toString("hex");
}

function once(work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= work();
    return done;
  };
}

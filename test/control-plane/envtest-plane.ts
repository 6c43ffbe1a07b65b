import { gatewayApiCrdsPath, installGatewayApi } from "../envtest/support/crds.js";
import { ENVTEST_AVAILABLE, ENVTEST_SKIP_LINE, type Envtest, startEnvtest } from "../support/envtest.js";
import type { ControlPlane, ControlPlaneKind, Manifests } from "./control-plane.js";

/** The real kube-apiserver on etcd (test/support/envtest.ts) as a ControlPlane. */
export const KUBE_APISERVER: ControlPlaneKind = {
  name: "kube-apiserver",
  unavailable: ENVTEST_AVAILABLE ? undefined : ENVTEST_SKIP_LINE,
  gatewayApi: gatewayApiCrdsPath() !== undefined,
  async start(options = {}) {
    const envtest = await startEnvtest({
      ...(options.watchCache === undefined ? {} : { watchCache: options.watchCache }),
      ...(options.serviceAccount ? { serviceAccount: options.serviceAccount } : {}),
    });
    return envtestPlane(envtest);
  },
};

export function envtestPlane(envtest: Envtest): ControlPlane {
  const remove = (
    kubectl: (args: readonly string[]) => Promise<string>,
    kind: string,
    namespace: string | undefined,
    name: string,
  ) => kubectl([...(namespace === undefined ? [] : ["-n", namespace]), "delete", kind, name]);
  return {
    url: envtest.url,
    serviceAccount: envtest.serviceAccount,
    syncUser: envtest.syncUser,
    kubeconfigPath: (identity) => envtest.kubeconfigPath(identity),
    async apply(input: Manifests) {
      await envtest.apply(input);
    },
    async remove(kind, namespace, name) {
      await remove((args) => envtest.kubectl(args), kind, namespace, name);
    },
    async writeStatus(kind, namespace, name, status) {
      await envtest.kubectl([
        ...["-n", namespace, "patch", kind, name, "--subresource=status", "--type=merge"],
        `-p=${JSON.stringify({ status })}`,
      ]);
    },
    get: (path, identity) => envtest.get(path, identity),
    send: (method, path, options) => envtest.send(method, path, options),
    // A SelfSubjectAccessReview, not `kubectl auth can-i`: that one maps resources through discovery, which
    // knows no kind whose CRD is not installed.
    async may(identity, question) {
      const review = {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: question },
      };
      const allowed = await envtest.kubectl(
        ["create", "--validate=false", "-f", "-", "-o", "jsonpath={.status.allowed}"],
        { input: JSON.stringify(review), identity },
      );
      return allowed.trim() === "true";
    },
    stopApiserver: () => envtest.stopApiserver({ signal: "SIGKILL" }),
    startApiserver: () => envtest.startApiserver(),
    get apiserverRunning() {
      return envtest.apiserverRunning;
    },
    async startPeer() {
      const peer = await envtest.startPeerApiserver();
      return {
        async apply(input) {
          await peer.apply(input);
        },
        async remove(kind, namespace, name) {
          await remove((args) => peer.kubectl(args), kind, namespace, name);
        },
        stop: () => peer.stop(),
      };
    },
    compact: () => envtest.compact(),
    requestCount: (verb, resource, scope) => envtest.requestCount(verb, resource, scope),
    installGatewayApi: () => installGatewayApi(envtest),
    close: () => envtest.close(),
  };
}

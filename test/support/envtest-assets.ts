import { accessSync, constants } from "node:fs";
import { delimiter, join, resolve } from "node:path";

/**
 * Where the envtest binaries are: the folder named by KUBEBUILDER_ASSETS (controller-runtime's envtest
 * convention) holds `kube-apiserver` and `etcd`; `kubectl` comes from that folder too when it is there (as in
 * setup-envtest's downloads), else from PATH.
 */
export interface EnvtestAssets {
  readonly dir: string;
  readonly kubeApiserver: string;
  readonly etcd: string;
  readonly kubectl: string;
}

/** The assets, or undefined when KUBEBUILDER_ASSETS is unset or a binary is missing. */
export function envtestAssets(env: NodeJS.ProcessEnv = process.env): EnvtestAssets | undefined {
  const folder = env.KUBEBUILDER_ASSETS;
  if (!folder) return undefined;
  const dir = resolve(folder);
  const kubeApiserver = join(dir, "kube-apiserver");
  const etcd = join(dir, "etcd");
  if (!executable(kubeApiserver) || !executable(etcd)) return undefined;
  const kubectl = [dir, ...(env.PATH ?? "").split(delimiter)]
    .filter((entry) => entry !== "")
    .map((entry) => join(entry, "kubectl"))
    .find(executable);
  return kubectl === undefined ? undefined : { dir, kubeApiserver, etcd, kubectl };
}

/** The one line printed when the envtest tests skip. */
export const ENVTEST_SKIP_LINE =
  "envtest tests skipped: KUBEBUILDER_ASSETS is unset or lacks kube-apiserver and etcd (or no kubectl is " +
  "found there or on PATH); get them with `go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest " +
  "use -p path 1.26.x` and export KUBEBUILDER_ASSETS=<the folder it prints> (CI: .ci/run uses ../shared/envtest)";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

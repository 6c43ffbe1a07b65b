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

/** The line each envtest file prints (and names a skipped test after) when it skips: what is missing, and where. */
export const ENVTEST_SKIP_LINE = `envtest tests skipped: ${missingAsset(process.env)}; get them with \`go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest use -p path 1.26.x\` and export KUBEBUILDER_ASSETS=<the folder it prints>; the same cases run against the fake API server meanwhile (test/control-plane/*.fake.test.ts)`;

function missingAsset(env: NodeJS.ProcessEnv): string {
  const folder = env.KUBEBUILDER_ASSETS;
  if (!folder) return "KUBEBUILDER_ASSETS is unset";
  const dir = resolve(folder);
  const missing = ["kube-apiserver", "etcd"].filter((binary) => !executable(join(dir, binary)));
  if (missing.length > 0) return `KUBEBUILDER_ASSETS=${folder} holds no ${missing.join(" and no ")}`;
  return envtestAssets(env) === undefined
    ? "no kubectl in KUBEBUILDER_ASSETS or on PATH"
    : "nothing is missing";
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

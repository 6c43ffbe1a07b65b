import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { ConfigurationError } from "../../lib/configuration-error.js";

const HOW_TO_FIX =
  "point KUBECONFIG at a kubeconfig file (kubectl config view --flatten > FILE), or unset it to use " +
  "~/.kube/config or, in a pod, its service account";

/**
 * The live sync's credentials for the API server, found where kubectl finds them: the files KUBECONFIG lists
 * (merged in order), else ~/.kube/config, else the pod's service account. A file that is missing, not YAML or
 * not a kubeconfig is a ConfigurationError naming the file and the fix; its content is never repeated, since
 * a kubeconfig holds tokens and keys.
 *
 * @example
 * const kubeConfig = loadKubeConfig(process.env.KUBECONFIG);
 */
export function loadKubeConfig(kubeconfig: string | undefined): KubeConfig {
  const files = (kubeconfig ?? "").split(delimiter).filter((file) => file !== "");
  const config = new KubeConfig();
  if (files.length === 0) {
    assertSomeKubeconfig();
    try {
      config.loadFromDefault();
    } catch (error) {
      throw new ConfigurationError(`~/.kube/config cannot be used (${reasonOf(error)}): ${HOW_TO_FIX}`);
    }
  }
  for (const [index, file] of files.entries()) {
    const loaded = index === 0 ? config : new KubeConfig();
    try {
      loaded.loadFromFile(file);
    } catch (error) {
      throw new ConfigurationError(`KUBECONFIG: ${file} ${problemOf(error)}: ${HOW_TO_FIX}`);
    }
    if (loaded !== config) config.mergeConfig(loaded);
  }
  if (!config.getCurrentCluster()) {
    const where = files.length === 0 ? "~/.kube/config" : `KUBECONFIG (${files.join(delimiter)})`;
    throw new ConfigurationError(
      `${where} has no current context with a cluster: choose one with \`kubectl config use-context NAME\`, or ${HOW_TO_FIX}`,
    );
  }
  return config;
}

/** Where the pod's service account is mounted (kubernetes.io/docs: "Accessing the API from within a Pod"). */
const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * With neither KUBECONFIG, ~/.kube/config nor a pod's service account, client-node falls back to
 * http://localhost:8080 and every request fails with a TLS complaint that names none of this: say it once.
 */
function assertSomeKubeconfig(): void {
  const home = process.env.HOME ?? homedir();
  const userConfig = join(home, ".kube", "config");
  const inPod = process.env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(SERVICE_ACCOUNT_TOKEN);
  if (existsSync(userConfig) || inPod) return;
  throw new ConfigurationError(
    `no kubeconfig: KUBECONFIG is unset, ${userConfig} does not exist and this is not a pod ` +
      `(no KUBERNETES_SERVICE_HOST with a service account token at ${SERVICE_ACCOUNT_TOKEN}): set KUBECONFIG ` +
      "to a kubeconfig file (kubectl config view --flatten > FILE), run the sync in the cluster (deploy/), or " +
      "read manifests with --from DIR",
  );
}

function problemOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") return "does not exist";
  if (code === "EACCES") return "cannot be read by this user (EACCES)";
  if (code === "EISDIR") return "is a directory";
  if ((error as { name?: unknown }).name === "YAMLException") return `is not valid YAML (${reasonOf(error)})`;
  // client-node reads fields of whatever the YAML held: an empty file or a bare string fails as a TypeError.
  if (error instanceof TypeError) return "is not a kubeconfig file (no clusters, contexts or users)";
  return `is not a kubeconfig file (${reasonOf(error)})`;
}

/** A YAML error's reason and line, without the excerpt of the file js-yaml appends; else the first line. */
function reasonOf(error: unknown): string {
  const { reason, mark, message } = error as {
    reason?: unknown;
    mark?: { line?: unknown };
    message?: unknown;
  };
  if (typeof reason === "string") {
    return typeof mark?.line === "number" ? `${reason} at line ${mark.line + 1}` : reason;
  }
  const text = typeof message === "string" ? message : String(error);
  return text.split("\n")[0] ?? text;
}

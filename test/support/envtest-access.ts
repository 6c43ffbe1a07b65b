import { generateKeyPairSync, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

/**
 * Who may talk to the envtest apiserver: static bearer tokens (`--token-auth-file`) for an admin and the sync's
 * ServiceAccount, plus the service-account signing key pair the apiserver requires. A static token naming
 * `system:serviceaccount:<ns>:<name>` in the ServiceAccount groups is authorised by RBAC exactly as a pod's
 * projected token would be (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#static-token-file).
 */
export type Identity = "admin" | "sync";

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

export interface AccessFiles {
  readonly tokensFile: string;
  readonly publicKeyFile: string;
  readonly privateKeyFile: string;
  readonly tokens: Readonly<Record<Identity, string>>;
  /** The RBAC user name of the sync: `system:serviceaccount:<ns>:<name>`. */
  readonly syncUser: string;
}

export function writeAccessFiles(dir: string, serviceAccount: ServiceAccountRef): AccessFiles {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const publicKeyFile = join(dir, "sa.pub");
  const privateKeyFile = join(dir, "sa.key");
  writeFileSync(publicKeyFile, publicKey);
  writeFileSync(privateKeyFile, privateKey, { mode: 0o600 });

  const tokens = { admin: randomBytes(16).toString("hex"), sync: randomBytes(16).toString("hex") };
  const syncUser = `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`;
  const lines = [
    `${tokens.admin},envtest-admin,envtest-admin,"system:masters"`,
    `${tokens.sync},${syncUser},envtest-sync,"system:serviceaccounts,system:serviceaccounts:${serviceAccount.namespace}"`,
  ];
  const tokensFile = join(dir, "tokens.csv");
  writeFileSync(tokensFile, `${lines.join("\n")}\n`, { mode: 0o600 });
  return { tokensFile, publicKeyFile, privateKeyFile, tokens, syncUser };
}

/** A kubeconfig (JSON, which every kubeconfig reader accepts) for `token` at `url`, TLS unverified. */
export function writeKubeconfig(path: string, url: string, user: string, token: string): void {
  const kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "envtest", cluster: { server: url, "insecure-skip-tls-verify": true } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "envtest", context: { cluster: "envtest", user } }],
    "current-context": "envtest",
  };
  writeFileSync(path, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
}

export function kubeConfigFor(url: string, user: string, token: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "envtest", server: url, skipTLSVerify: true }],
    users: [{ name: user, token }],
    contexts: [{ name: "envtest", cluster: "envtest", user }],
    currentContext: "envtest",
  });
  return kubeConfig;
}

import { KubeConfig } from "@kubernetes/client-node";

/** A KubeConfig for the fake API server at `url`, authenticating with `token` (also from a child process). */
export function fakeKubeConfig(url: string, token: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "fake", server: url, skipTLSVerify: true }],
    users: [{ name: "fake", token }],
    contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
    currentContext: "fake",
  });
  return config;
}

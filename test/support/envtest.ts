import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { Agent } from "undici";
import { sumRequests } from "./apiserver-metrics.js";
import {
  type AccessFiles,
  type Identity,
  kubeConfigFor,
  type ServiceAccountRef,
  writeAccessFiles,
  writeKubeconfig,
} from "./envtest-access.js";
import { ENVTEST_SKIP_LINE, envtestAssets } from "./envtest-assets.js";
import { httpSend } from "./envtest-http.js";
import { type Daemon, pollUntil, removeOnExit, runCommand } from "./envtest-process.js";
import { type EtcdServer, startApiserverProcess, startEtcd } from "./envtest-servers.js";
import { freePort } from "./redis.js";

export { sumRequests } from "./apiserver-metrics.js";
export type { Identity, ServiceAccountRef } from "./envtest-access.js";
export { ENVTEST_SKIP_LINE, type EnvtestAssets, envtestAssets } from "./envtest-assets.js";

/** True when envtest tests can run; use with describe.skipIf(!ENVTEST_AVAILABLE). */
export const ENVTEST_AVAILABLE = envtestAssets() !== undefined;

export interface EnvtestOptions {
  /** `--watch-cache` (default true, as in production). False: watches go straight to etcd. */
  readonly watchCache?: boolean;
  /** The ServiceAccount the "sync" identity stands for; default edgeslice/edgeslice-sync (deploy/). */
  readonly serviceAccount?: ServiceAccountRef;
  /** Extra kube-apiserver flags. */
  readonly apiserverFlags?: readonly string[];
}

export interface Envtest {
  readonly url: string;
  /** The temp dir holding etcd data, certs, tokens, kubeconfigs and logs (removed by close()). */
  readonly dir: string;
  readonly serviceAccount: ServiceAccountRef;
  /** RBAC user of the sync: system:serviceaccount:<ns>:<name>. */
  readonly syncUser: string;
  kubeconfigPath(identity?: Identity): string;
  kubeConfig(identity?: Identity): KubeConfig;
  /** `kubectl apply` as admin: YAML/JSON text, one object or a list of objects. */
  apply(input: string | object | readonly object[]): Promise<string>;
  /** Any kubectl command as admin (or `identity`); resolves its stdout. */
  kubectl(args: readonly string[], options?: { input?: string; identity?: Identity }): Promise<string>;
  /** GET `path` on the apiserver with `identity`'s token. */
  get(path: string, identity?: Identity): Promise<{ status: number; body: string }>;
  /** One request with a JSON body (or none) on the apiserver with `identity`'s token (admin by default). */
  send(
    method: "GET" | "POST" | "PUT",
    path: string,
    options?: { identity?: Identity; body?: unknown },
  ): Promise<{ status: number; body: string }>;
  /**
   * Stops the apiserver alone (etcd keeps running). On SIGTERM (the default) it refuses new connections at
   * once but holds open watches for up to 60 s before it exits; this waits for the exit. SIGKILL is instant.
   */
  stopApiserver(options?: { signal?: NodeJS.Signals }): Promise<void>;
  /** Starts the apiserver again on the same port; resolves once /readyz answers 200. */
  startApiserver(): Promise<void>;
  readonly apiserverRunning: boolean;
  /**
   * A second apiserver on the same etcd and another port (as in an HA control plane), to change the
   * cluster while the main one is down. Stop it before starting the main one again, or not: both work.
   */
  startPeerApiserver(): Promise<PeerApiserver>;
  /** Compacts etcd at its current revision; resolves that revision. */
  compact(): Promise<number>;
  /** The apiserver's /metrics text (admin). */
  metrics(): Promise<string>;
  /**
   * apiserver_request_total summed over codes for `verb` (LIST, WATCH, GET...) and `resource`, optionally of
   * one `scope` ("cluster": all namespaces, "namespace", "resource"). The metric names no client; a WATCH is
   * counted when it ends.
   */
  requestCount(verb: string, resource: string, scope?: string): Promise<number>;
  /** Stops everything and removes the temp dir. Idempotent. */
  close(): Promise<void>;
}

export interface PeerApiserver {
  readonly url: string;
  readonly kubeconfigPath: string;
  /** `kubectl apply` as admin on this apiserver. */
  apply(input: string | object | readonly object[]): Promise<string>;
  kubectl(args: readonly string[], options?: { input?: string }): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A real kube-apiserver on a real etcd for tests, from the folder named by KUBEBUILDER_ASSETS (the envtest
 * convention of controller-runtime: it holds `kube-apiserver` and `etcd`). Each call gets its own temp dir and
 * free loopback ports, so test files run side by side; RBAC is on, with an admin and the sync's ServiceAccount
 * as static tokens (envtest-access.ts). No controllers run: tests create EndpointSlices themselves.
 *
 *   const envtest = await startEnvtest({ watchCache: false });
 *   await envtest.apply(yamlText);                  // kubectl apply as admin
 *   process.env.KUBECONFIG = envtest.kubeconfigPath("sync");
 *   await envtest.stopApiserver(); await envtest.startApiserver();   // etcd and port kept
 *   await envtest.compact();                        // etcd compaction: resumed watches get 410 Gone
 *   await envtest.requestCount("LIST", "endpointslices");
 *   await envtest.close();                          // always, in afterAll
 */
export async function startEnvtest(options: EnvtestOptions = {}): Promise<Envtest> {
  const assets = envtestAssets();
  if (!assets) throw new Error(ENVTEST_SKIP_LINE);
  const dir = mkdtempSync(join(tmpdir(), "edgeslice-envtest-"));
  removeOnExit(dir);
  const serviceAccount = options.serviceAccount ?? { namespace: "edgeslice", name: "edgeslice-sync" };
  const access = writeAccessFiles(dir, serviceAccount);
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  let etcd: EtcdServer | undefined;
  let apiserver: Daemon | undefined;
  const peers = new Set<Daemon>();
  const flags = [
    ...(options.watchCache === false ? ["--watch-cache=false"] : []),
    ...(options.apiserverFlags ?? []),
  ];

  const close = async () => {
    await Promise.all([...peers].map((peer) => peer.stop("SIGKILL")));
    await apiserver?.stop("SIGKILL");
    await etcd?.stop();
    await dispatcher.close();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    etcd = await startEtcd(assets, dir);
    const launch = (at: number, name: string) =>
      startApiserverProcess({
        assets,
        dir,
        name,
        port: at,
        etcdUrl: (etcd as EtcdServer).url,
        access,
        flags,
        dispatcher,
      });
    // A port picked free may be taken by a test alongside before the apiserver binds it: retry elsewhere.
    let port = 0;
    for (let attempt = 1; !apiserver; attempt++) {
      port = await freePort();
      apiserver = await launch(port, "apiserver").catch((error: unknown) => {
        if (attempt >= 3) throw error;
        return undefined;
      });
    }
    const url = `https://127.0.0.1:${port}`;
    const kubeconfigs = writeKubeconfigs(dir, url, access);
    const send: Envtest["send"] = (method, path, sendOptions = {}) =>
      httpSend(
        dispatcher,
        method,
        `${url}${path}`,
        access.tokens[sendOptions.identity ?? "admin"],
        sendOptions.body,
      );
    const get = (path: string, identity: Identity = "admin") => send("GET", path, { identity });
    // /readyz answers 200 before the apiserver's own controller has created the `default` namespace.
    await pollUntil(async () => (await get("/api/v1/namespaces/default")).status === 200, {
      timeoutMs: 30_000,
      describe: () => "the default namespace was never created",
    });
    const kubectl = (args: readonly string[], kubectlOptions: { input?: string; identity?: Identity } = {}) =>
      kubectlWith(
        assets.kubectl,
        kubeconfigs[kubectlOptions.identity ?? "admin"],
        args,
        kubectlOptions.input,
      );
    const metrics = async () => {
      const response = await get("/metrics");
      if (response.status !== 200) throw new Error(`apiserver /metrics answered ${response.status}`);
      return response.body;
    };
    return {
      url,
      dir,
      serviceAccount,
      syncUser: access.syncUser,
      kubeconfigPath: (identity = "admin") => kubeconfigs[identity],
      kubeConfig: (identity = "admin") => kubeConfigFor(url, identity, access.tokens[identity]),
      apply: (input) => kubectl(["apply", "-f", "-"], { input: manifestText(input) }),
      kubectl,
      get,
      send,
      async stopApiserver(stopOptions = {}) {
        await apiserver?.stop(stopOptions.signal ?? "SIGTERM", 90_000);
        apiserver = undefined;
      },
      async startApiserver() {
        if (apiserver && !apiserver.exited) throw new Error("the apiserver is already running");
        apiserver = await launch(port, "apiserver");
      },
      get apiserverRunning() {
        return apiserver !== undefined && !apiserver.exited;
      },
      async startPeerApiserver() {
        const peerPort = await freePort();
        const peer = await launch(peerPort, `peer-${peerPort}`);
        peers.add(peer);
        const peerUrl = `https://127.0.0.1:${peerPort}`;
        const kubeconfigPath = join(dir, `kubeconfig-peer-${peerPort}.json`);
        writeKubeconfig(kubeconfigPath, peerUrl, "admin", access.tokens.admin);
        return {
          url: peerUrl,
          kubeconfigPath,
          apply: (input) =>
            kubectlWith(assets.kubectl, kubeconfigPath, ["apply", "-f", "-"], manifestText(input)),
          kubectl: (args, kubectlOptions = {}) =>
            kubectlWith(assets.kubectl, kubeconfigPath, args, kubectlOptions.input),
          async stop() {
            await peer.stop("SIGKILL");
            peers.delete(peer);
          },
        };
      },
      compact: () => (etcd as EtcdServer).compact(),
      metrics,
      async requestCount(verb, resource, scope) {
        return sumRequests(await metrics(), verb, resource, scope);
      },
      close: once(close),
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function writeKubeconfigs(dir: string, url: string, access: AccessFiles): Record<Identity, string> {
  const paths = { admin: join(dir, "kubeconfig-admin.json"), sync: join(dir, "kubeconfig-sync.json") };
  writeKubeconfig(paths.admin, url, "admin", access.tokens.admin);
  writeKubeconfig(paths.sync, url, access.syncUser, access.tokens.sync);
  return paths;
}

function kubectlWith(
  kubectl: string,
  kubeconfigPath: string,
  args: readonly string[],
  input: string | undefined,
): Promise<string> {
  return runCommand(kubectl, ["--kubeconfig", kubeconfigPath, ...args], input === undefined ? {} : { input });
}

function manifestText(input: string | object | readonly object[]): string {
  if (typeof input === "string") return input;
  const items = Array.isArray(input) ? input : [input];
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}

/**
 * Waits until `identity` may GET `path` (RBAC objects reach the authorizer's cache a moment after apply), on
 * envtest or any control plane with the same `get` (test/control-plane/).
 */
export async function untilAllowed(
  envtest: Pick<Envtest, "get">,
  path: string,
  identity: Identity = "sync",
  timeoutMs = 10_000,
): Promise<void> {
  let last = 0;
  await pollUntil(
    async () => {
      last = (await envtest.get(path, identity)).status;
      return last === 200;
    },
    { timeoutMs, describe: () => `${identity} may not GET ${path} (last status ${last})` },
  );
}

function once<T>(work: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => {
    result ??= work();
    return result;
  };
}

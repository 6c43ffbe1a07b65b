import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Agent, request } from "undici";
import type { AccessFiles } from "./envtest-access.js";
import { type Daemon, pollUntil, startDaemon } from "./envtest-process.js";
import { freePort } from "./redis.js";

/** etcd and kube-apiserver processes for envtest.ts, with the flags /work/shared/envtest/README.md lists. */
export interface ServerAssets {
  readonly kubeApiserver: string;
  readonly etcd: string;
}

export interface EtcdServer {
  readonly url: string;
  /** Compacts at the current revision (resumed watches from before it get 410 Gone); resolves it. */
  compact(): Promise<number>;
  stop(): Promise<void>;
}

const START_ATTEMPTS = 3;

/**
 * etcd on two free loopback ports. A port picked free can be taken by a test running alongside before etcd
 * binds it, so a start that dies early is retried on new ports.
 */
export async function startEtcd(assets: ServerAssets, dir: string): Promise<EtcdServer> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const clientPort = await freePort();
    const peerPort = await freePort();
    const url = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const daemon = startDaemon(
      assets.etcd,
      [
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        "--name=default",
        "--log-level=warn",
      ],
      join(dir, `etcd-${attempt}.log`),
    );
    try {
      await pollUntil(() => etcdHealthy(url), {
        timeoutMs: 20_000,
        giveUpIf: () => daemon.exited,
        describe: () => `etcd did not become healthy at ${url}:\n${daemon.logTail()}`,
      });
      return {
        url,
        compact: () => compactEtcd(url),
        stop: () => daemon.stop("SIGKILL"),
      };
    } catch (error) {
      lastError = error;
      await daemon.stop("SIGKILL");
    }
  }
  throw lastError;
}

async function etcdHealthy(url: string): Promise<boolean> {
  const response = await request(`${url}/health`);
  const body = await response.body.text();
  return response.statusCode === 200 && body.includes('"true"');
}

/**
 * Through etcd's gRPC-JSON gateway (`/v3/kv/...`, etcd >= 3.4), so no etcdctl is needed: setup-envtest's
 * asset folders ship `etcd` without it. Equivalent to `ETCDCTL_API=3 etcdctl compact REV --physical`.
 */
async function compactEtcd(url: string): Promise<number> {
  const range = await postJson(`${url}/v3/kv/range`, { key: Buffer.from("\0").toString("base64") });
  const revision = Number((range as { header?: { revision?: string } }).header?.revision);
  if (!Number.isInteger(revision) || revision < 1) throw new Error(`etcd revision unreadable: ${range}`);
  await postJson(`${url}/v3/kv/compaction`, { revision: String(revision), physical: true });
  return revision;
}

async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`etcd ${url} answered ${response.statusCode}: ${text}`);
  return JSON.parse(text);
}

export interface ApiserverLaunch {
  readonly assets: ServerAssets;
  readonly dir: string;
  /** Names its cert dir and log file, so a restart reuses the same serving certificate. */
  readonly name: string;
  readonly port: number;
  readonly etcdUrl: string;
  readonly access: AccessFiles;
  readonly flags: readonly string[];
  readonly dispatcher: Agent;
}

/** kube-apiserver on `port`; resolves once GET /readyz answers 200 to the admin. */
export async function startApiserverProcess(launch: ApiserverLaunch): Promise<Daemon> {
  const certDir = join(launch.dir, `certs-${launch.name}`);
  mkdirSync(certDir, { recursive: true });
  const daemon = startDaemon(
    launch.assets.kubeApiserver,
    [
      `--etcd-servers=${launch.etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${launch.port}`,
      `--cert-dir=${certDir}`,
      `--service-account-key-file=${launch.access.publicKeyFile}`,
      `--service-account-signing-key-file=${launch.access.privateKeyFile}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      "--authorization-mode=RBAC",
      `--token-auth-file=${launch.access.tokensFile}`,
      "--service-cluster-ip-range=10.96.0.0/12",
      "--endpoint-reconciler-type=none",
      ...launch.flags,
    ],
    join(launch.dir, `${launch.name}.log`),
  );
  const readyz = `https://127.0.0.1:${launch.port}/readyz`;
  try {
    await pollUntil(
      async () => {
        const response = await request(readyz, {
          dispatcher: launch.dispatcher,
          headers: { authorization: `Bearer ${launch.access.tokens.admin}` },
        });
        await response.body.text();
        return response.statusCode === 200;
      },
      {
        timeoutMs: 60_000,
        giveUpIf: () => daemon.exited,
        describe: () => `kube-apiserver did not become ready at ${readyz}:\n${daemon.logTail()}`,
      },
    );
  } catch (error) {
    await daemon.stop("SIGKILL");
    throw error;
  }
  return daemon;
}

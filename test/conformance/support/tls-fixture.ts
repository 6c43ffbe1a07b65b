import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { createEchoFleet, type EchoFleet } from "../../e2e/support/echo-backends.js";
import { type KubeCluster, startKubeCluster } from "../../e2e/support/kube-cluster.js";
import type { ApplyInput } from "../../fake-kube/store.js";
import { createTestAuthority, tlsSecret } from "../../support/certificates.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";
import { BACKEND_SERVICES, baseObjects, gatewayObject, INFRA, serviceObjects } from "./conformance-base.js";

/** The fixture router's ADMIN_TOKEN, for its metrics endpoint. */
export const ADMIN_TOKEN = "tls-fixture-admin-token";

/** What curl saw of one HTTPS request: the status (0 when the handshake failed), body, and the leaf's subject. */
export interface CurlAnswer {
  readonly status: number;
  readonly body: string;
  /** The server certificate's subject line as curl -v prints it (`CN = a.example.com`), "" when none. */
  readonly subject: string;
  /** The server certificate's "expire date" as curl -v prints it: tells a renewed certificate apart. */
  readonly expires: string;
  /** The HTTP version of the answer as curl reports it: "1.1" or "2" ("0" when none). */
  readonly httpVersion: string;
}

export interface TlsConformance {
  readonly cluster: KubeCluster;
  /** The first router. */
  readonly router: NodeRouter;
  /** The first router's HTTPS_PORT. */
  readonly httpsPort: number;
  /** Every router by name (the `routers` option). */
  readonly routers: ReadonlyMap<string, NodeRouter>;
  /** The port router `router` (default the first) serves Gateway listener port `listenerPort` (default 443) on. */
  tlsPort(router?: string, listenerPort?: number): number;
  /** curl -k to https://`sni`:port with --resolve to 127.0.0.1, Host `host` (default `sni`). */
  curl(options: { sni: string; path?: string; host?: string; http2?: boolean }): Promise<CurlAnswer>;
  /** The conditions of one listener of a Gateway of the infra namespace, as the sync wrote them. */
  listenerConditions(
    gateway: string,
    listener: string,
  ): readonly { type: string; status: string; reason: string }[];
  stop(): Promise<void>;
}

/**
 * A conformance world with TLS: the base objects, echo backends, the live sync on a fake API server and one
 * Node router per entry of `routers` (its GATEWAYS setting, or every Gateway), sync and routers sharing a fresh
 * TLS_STORE_KEY, each router's TLS ports on free ports (`env` adds settings, e.g. HTTPS_LISTENER_PORTS).
 */
export async function startTlsConformance(options: {
  readonly label: string;
  readonly objects: readonly ApplyInput[];
  readonly routers?: Readonly<Record<string, string | undefined>>;
  readonly env?: Readonly<Record<string, string>>;
}): Promise<TlsConformance> {
  const prefix = uniquePrefix(`tls-${options.label}`);
  const storeKey = randomBytes(32).toString("base64");
  const fleet: EchoFleet = createEchoFleet();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  let cluster: KubeCluster | undefined;
  const routers = new Map<string, NodeRouter>();
  const stop = async () => {
    for (const router of routers.values()) await router.close();
    await cluster?.stop();
    await fleet.closeAll();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  };
  try {
    const backends = await fleet.start(BACKEND_SERVICES.map((item) => `${item.namespace}/${item.name}`));
    cluster = await startKubeCluster({
      name: "east",
      prefix,
      redisUrl: REDIS_URL,
      env: { GATEWAY_ADDRESSES: "127.0.0.1", LOG_LEVEL: "error", TLS_STORE_KEY: storeKey },
    });
    for (const object of [...baseObjects(), ...serviceObjects(backends), ...options.objects]) {
      cluster.kube.apply(object);
    }
    for (const [name, gateways] of Object.entries(options.routers ?? { router: undefined })) {
      const config = parseRouterConfig({
        REDIS_URL,
        PORT: "0",
        EDGESLICE_PREFIX: prefix,
        LOG_LEVEL: "error",
        TLS_STORE_KEY: storeKey,
        ADMIN_TOKEN: ADMIN_TOKEN,
        ...options.env,
        ...(gateways ? { GATEWAYS: gateways } : {}),
      });
      const router = await startNodeRouter(config, {
        host: "127.0.0.1",
        logger: silentLogger,
        refreshIntervalMs: 100,
      });
      routers.set(name, router);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const [started] = routers.values();
  const httpsPort = started?.https?.port;
  if (started === undefined || httpsPort === undefined) throw new Error("the router has no HTTPS listener");
  const tlsPort = (router?: string, listenerPort = 443) => {
    const chosen = router === undefined ? started : routers.get(router);
    const port = chosen?.https?.ports.find((item) => item.listenerPort === listenerPort)?.port;
    if (port === undefined)
      throw new Error(`no router ${router ?? ""} serving listener port ${listenerPort}`);
    return port;
  };
  return {
    cluster: cluster as KubeCluster,
    router: started,
    httpsPort,
    routers,
    tlsPort,
    curl: (request) => curlHttps(httpsPort, request),
    listenerConditions(gateway, listener) {
      const status = cluster?.kube.get("Gateway", INFRA, gateway)?.status as
        | { listeners?: { name: string; conditions: { type: string; status: string; reason: string }[] }[] }
        | undefined;
      return status?.listeners?.find((item) => item.name === listener)?.conditions ?? [];
    },
    stop,
  };
}

/** One request with Debian's curl; never throws for a failed handshake (status 0). */
export function curlHttps(
  port: number,
  request: { sni: string; path?: string; host?: string; http2?: boolean },
): Promise<CurlAnswer> {
  const args = [
    "-k",
    "-sS",
    "-v",
    "--max-time",
    "5",
    "--resolve",
    `${request.sni}:${port}:127.0.0.1`,
    request.http2 ? "--http2" : "--http1.1",
    "-w",
    "\n%{http_version} %{http_code}",
    ...(request.host ? ["-H", `Host: ${request.host}`] : []),
    `https://${request.sni}:${port}${request.path ?? "/"}`,
  ];
  return new Promise((resolve) => {
    execFile("/usr/bin/curl", args, { encoding: "utf8" }, (_error, stdout, stderr) => {
      const lines = stdout.split("\n");
      const [httpVersion = "0", code = "0"] = (lines.pop() ?? "").split(" ");
      const status = Number(code) || 0;
      const subject = /\*\s+subject: ([^\n]*)/.exec(stderr)?.[1]?.trim() ?? "";
      const expires = /\*\s+expire date: ([^\n]*)/.exec(stderr)?.[1]?.trim() ?? "";
      resolve({ status, body: lines.join("\n"), subject, expires, httpVersion });
    });
  });
}

/** Polls `check` until it holds or `timeoutMs` passes; returns the last value. */
export async function untilTrue<T>(
  read: () => Promise<T> | T,
  check: (value: T) => boolean,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The suite's base HTTPS objects (gateway-api v1.6.1 conformance/base): the Gateway
 * `same-namespace-with-https-listener` (listener `https` without hostname, `https-with-hostname` for
 * second-example.org, `https-with-wildcard-hostname` for *.wildcard.org and
 * `https-with-hostname-matching-wildcard` for fourth-example.wildcard.org, all on 443 with the Secret
 * `tls-validity-checks-certificate`), and that Secret, here issued at test time by a fresh authority for the
 * names the tests ask for.
 */
export function httpsBaseObjects(): ApplyInput[] {
  const certificate = createTestAuthority().issue([
    "example.org",
    "second-example.org",
    "*.example.org",
    "*.wildcard.org",
  ]);
  const https = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    port: 443,
    protocol: "HTTPS",
    allowedRoutes: { namespaces: { from: "Same" } },
    tls: { certificateRefs: [{ group: "", kind: "Secret", name: "tls-validity-checks-certificate" }] },
    ...extra,
  });
  return [
    tlsSecret(INFRA, "tls-validity-checks-certificate", certificate),
    gatewayObject("same-namespace-with-https-listener", [
      https("https"),
      https("https-with-hostname", { hostname: "second-example.org" }),
      https("https-with-wildcard-hostname", { hostname: "*.wildcard.org" }),
      https("https-with-hostname-matching-wildcard", { hostname: "fourth-example.wildcard.org" }),
    ]),
  ];
}

/** The condition of `type` among a listener's, for assertions that name one. */
export function conditionOf(
  conditions: readonly { type: string; status: string; reason: string }[],
  type: string,
): { status: string; reason: string } | undefined {
  const found = conditions.find((item) => item.type === type);
  return found && { status: found.status, reason: found.reason };
}

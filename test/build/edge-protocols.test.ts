import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { type EchoBackend, echoClient, startEchoBackend, unary } from "../support/grpc-echo.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { productionInstall, remove, runNode, startNode } from "./support/built.js";

/**
 * Issue 24's "done when" on the production build: `node dist/sync.js --from DIR --once` publishes an HTTPS
 * listener's certificate and a GRPCRoute, and `node dist/router.js` serves curl over TLS + HTTP/2 and a gRPC
 * client over h2c from those records, to backends on loopback.
 */
const run = promisify(execFile);
const GATEWAY_API = "gateway.networking.k8s.io/v1";
const prefix = uniquePrefix("built-edge");
const storeKey = randomBytes(32).toString("base64");
const redis = new Redis(REDIS_URL, { lazyConnect: true });
const leaf = createTestAuthority().issue(["secure.localhost"]);
let dir = "";
let echo: Server | undefined;
let grpcBackend: EchoBackend | undefined;

function loopbackService(name: string, port: number, appProtocol?: string) {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "edge" },
      spec: { ports: [{ name: "main", port: 80, protocol: "TCP", targetPort: port, appProtocol }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${name}-ipv4`, namespace: "edge", labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "main", port, protocol: "TCP", appProtocol }],
      endpoints: [
        { addresses: ["127.0.0.1"], conditions: { ready: true, serving: true, terminating: false } },
      ],
    },
  ];
}

function manifests(echoPort: number, grpcPort: number) {
  return [
    {
      apiVersion: GATEWAY_API,
      kind: "GatewayClass",
      metadata: { name: "edgeslice" },
      spec: { controllerName: "edgeslice.io/gateway-controller" },
    },
    {
      apiVersion: GATEWAY_API,
      kind: "Gateway",
      metadata: { name: "front", namespace: "edge" },
      spec: {
        gatewayClassName: "edgeslice",
        listeners: [
          {
            name: "https",
            port: 443,
            protocol: "HTTPS",
            hostname: "secure.localhost",
            tls: { certificateRefs: [{ name: "secure-tls" }] },
          },
          { name: "http", port: 80, protocol: "HTTP", hostname: "*.localhost" },
        ],
      },
    },
    tlsSecret("edge", "secure-tls", leaf),
    {
      apiVersion: GATEWAY_API,
      kind: "HTTPRoute",
      metadata: { name: "secure", namespace: "edge" },
      spec: {
        parentRefs: [{ name: "front" }],
        hostnames: ["secure.localhost"],
        rules: [{ backendRefs: [{ name: "echo", port: 80 }] }],
      },
    },
    {
      apiVersion: GATEWAY_API,
      kind: "GRPCRoute",
      metadata: { name: "grpc", namespace: "edge" },
      spec: {
        parentRefs: [{ name: "front", sectionName: "http" }],
        hostnames: ["grpc.localhost"],
        rules: [
          {
            matches: [{ method: { service: "edgeslice.test.Echo", method: "Echo" } }],
            backendRefs: [{ name: "grpc-echo", port: 80 }],
          },
        ],
      },
    },
    ...loopbackService("echo", echoPort),
    ...loopbackService("grpc-echo", grpcPort, "kubernetes.io/h2c"),
  ];
}

beforeAll(async () => {
  dir = await productionInstall();
  echo = createServer((request, response) => {
    response.end(`echo saw ${request.headers.host} over HTTP/${request.httpVersion}`);
  });
  await new Promise<void>((resolve) => echo?.listen(0, "127.0.0.1", resolve));
  grpcBackend = await startEchoBackend("loopback-grpc");
  const echoPort = (echo.address() as AddressInfo).port;
  const text = manifests(echoPort, grpcBackend.port)
    .map((item) => stringify(item))
    .join("---\n");
  await mkdir(join(dir, "manifests"), { mode: 0o755 });
  await writeFile(join(dir, "manifests", "edge.yaml"), text, { mode: 0o644 });
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => (echo ? echo.close(resolve) : resolve(undefined)));
  await grpcBackend?.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
  await remove(dir);
});

/**
 * curl, again while the TLS handshake fails with unrecognized_name: the router reads its certificates after its
 * store's first load ("store loaded" is logged first), and a name it has no certificate for is refused until then.
 */
async function curlOnceCertified(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await run("curl", args);
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? "");
      if (!stderr.includes("unrecognized name") || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const env = () => ({ CLUSTER_NAME: "built", REDIS_URL, EDGESLICE_PREFIX: prefix, TLS_STORE_KEY: storeKey });

describe("the built sync and router on HTTPS, HTTP/2 and gRPC", () => {
  it("publishes the HTTPS listener's certificate and the GRPCRoute from a folder with `node dist/sync.js`", async () => {
    const published = await runNode(dir, ["dist/sync.js", "--from", join(dir, "manifests"), "--once"], env());

    expect(published.code, published.stderr).toBe(0);
    expect(await redis.hkeys(`${prefix}:{built}:certificates`)).toEqual(["edge/secure-tls"]);
    expect((await redis.hkeys(`${prefix}:{built}:routes`)).sort()).toEqual([
      "grpcroute:edge/grpc",
      "httproute:edge/secure",
    ]);
  });

  it("serves curl --http2 over TLS with the test's certificate and a gRPC call over h2c, then exits 0", async () => {
    const router = startNode(dir, ["dist/router.js"], {
      ...env(),
      PORT: "0",
      HTTPS_PORT: "0",
      ADMIN_PORT: "0",
      HOST: "127.0.0.1",
    });
    const client = { current: undefined as ReturnType<typeof echoClient> | undefined };
    try {
      await router.waitFor(/"msg":"router listening for HTTPS"/, 15_000);
      await router.waitFor(/"msg":"store loaded"/, 15_000);
      const port = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(router.output())?.[1]);
      const httpsPort = Number(/"url":"https:\/\/127\.0\.0\.1:(\d+)"/.exec(router.output())?.[1]);

      const curl = await curlOnceCertified([
        "-k",
        "-v",
        "-sS",
        "--http2",
        "--max-time",
        "10",
        "--resolve",
        `secure.localhost:${httpsPort}:127.0.0.1`,
        "-w",
        "\n%{http_code} %{http_version}",
        `https://secure.localhost:${httpsPort}/`,
      ]);
      const [body, status] = curl.stdout.split("\n");
      expect(status).toBe("200 2");
      expect(body).toBe(`echo saw secure.localhost:${httpsPort} over HTTP/1.1`);
      expect(curl.stderr).toMatch(/subject: CN\s?=\s?secure\.localhost/);

      client.current = echoClient(port, "grpc.localhost");
      const answer = await unary(client.current, "Echo", "hello");
      const unknown = await unary(client.current, "EchoTwo", "hello");
      expect(answer.ok && answer.text).toBe("loopback-grpc hello");
      expect(!unknown.ok && unknown.code).toBe(grpc.status.UNIMPLEMENTED);
      expect(grpcBackend?.calls).toEqual(["Echo"]);
    } finally {
      client.current?.close();
      router.child.kill("SIGTERM");
    }
    const stopped = await router.finished;
    expect(stopped.code, stopped.stderr).toBe(0);
  });
});

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/redis.js";
import { ROOT } from "../sync/run-sync-cli.js";

const run = promisify(execFile);

/** A folder of its own (the examples' fixed demo ports may be in use by test/e2e/start-script.test.ts). */
function manifests(webPort: number, shopPort: number): string {
  const slice = (service: string, port: number) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${service}, namespace: demo, labels: { kubernetes.io/service-name: ${service} } }
addressType: IPv4
ports: [{ name: http, port: ${port}, protocol: TCP }]
endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }]
`;
  const service = (name: string, annotations: string) => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: demo, annotations: { ${annotations} } }
spec: { ports: [{ name: http, port: 80, targetPort: http }] }
`;
  return [
    service("web", "edgeslice.io/hosts: web.localhost"),
    slice("web", webPort),
    service("shop", ""),
    slice("shop", shopPort),
    `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: edgeslice }
spec: { controllerName: edgeslice.io/gateway-controller }
`,
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: demo }
spec:
  gatewayClassName: edgeslice
  listeners: [{ name: http, protocol: HTTP, port: 80, hostname: "*.localhost" }]
`,
    `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop, namespace: demo }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [shop.localhost]
  rules: [{ backendRefs: [{ name: shop, port: 80 }] }]
`,
  ].join("---\n");
}

let folder = "";
let child: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "edgeslice-start-https-"));
  await writeFile(join(folder, "demo.yaml"), manifests(await freePort(), await freePort()));
  const { REDIS_URL: _memoryStore, ...env } = process.env;
  child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--https"], {
    cwd: ROOT,
    env: { ...env, EXAMPLES_DIR: folder, PORT: "0", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const deadline = Date.now() + 45_000;
  while (!output.includes("Ctrl-C stops everything.")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start --https:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  await rm(folder, { recursive: true, force: true });
});

/** The HTTPS curls the banner prints, as argument lists. */
function printedHttpsCurls(): string[][] {
  return output
    .split("\n")
    .filter((line) => line.trim().startsWith("curl --cacert "))
    .map((line) => line.trim().split(/\s+/).slice(1));
}

describe("npm start -- --https", () => {
  it("prints a curl per demo host that trusts the certificate made at start, and each one is answered", async () => {
    const curls = printedHttpsCurls();

    expect(curls.map((args) => args.at(-1)?.replace(/:\d+\//, ":PORT/"))).toEqual([
      "https://web.localhost:PORT/",
      "https://shop.localhost:PORT/",
    ]);
    for (const args of curls) {
      const answer = await run("curl", ["--silent", "--show-error", "--max-time", "10", ...args]);
      expect(answer.stdout).toMatch(/^demo\/(web|shop) answered over IPv4 from 127\.0\.0\.1:\d+: GET \//);
    }
  });

  it("serves HTTP/2 by ALPN, with the certificate's name checked", async () => {
    const [args = []] = printedHttpsCurls();
    const answer = await run("curl", [
      "--silent",
      "--write-out",
      " %{http_version} %{ssl_verify_result}",
      ...args,
    ]);

    expect(answer.stdout).toMatch(/ 2 0$/);
  });

  it("removes the certificate's file when it stops", async () => {
    const caFile = printedHttpsCurls()[0]?.[1] ?? "";
    expect(existsSync(caFile)).toBe(true);

    child?.kill("SIGTERM");
    const [code] = (await once(child as ChildProcess, "exit")) as [number | null];

    expect(code).toBe(0);
    expect(existsSync(caFile)).toBe(false);
  });
});

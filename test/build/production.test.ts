import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { canRunAsPod, productionInstall, ROOT, remove, runNode, startNode } from "./support/built.js";
import { type ExampleBackends, serveExamplesIn } from "./support/examples.js";

/**
 * The image's runtime stage, rebuilt in a temp folder: `npm run build` output plus `npm ci --omit=dev`, so no
 * tsx, no esbuild, no TypeScript. Every process runs with plain `node` and only the variables a pod would set,
 * as uid 65532 on a read-only root filesystem when the machine allows (root, unshare, setpriv).
 */
let dir = "";
let examplesDir = "";
let backends: ExampleBackends | undefined;
const prefix = uniquePrefix("built");
const redis = new Redis(REDIS_URL, { lazyConnect: true });
const run = promisify(execFile);

beforeAll(async () => {
  dir = await productionInstall();
  examplesDir = join(dir, "examples");
  await mkdir(examplesDir, { mode: 0o755 });
  backends = await serveExamplesIn(examplesDir);
}, 120_000);

afterAll(async () => {
  await backends?.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
  await remove(dir);
});

function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host }, timeout: 10_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end();
  });
}

describe("the production install (npm run build + npm ci --omit=dev --omit=optional)", () => {
  it("holds the production dependencies and none of the build tools, nor client-node (vendored into the sync)", () => {
    for (const name of ["ioredis", "hono", "valibot", "yaml"]) {
      expect(existsSync(join(dir, "node_modules", name, "package.json")), name).toBe(true);
    }
    // undici: the router sends with its own clients (functions/node/dispatchers.ts); only the bench uses it.
    for (const name of [
      "tsx",
      "esbuild",
      "typescript",
      "vitest",
      "@kubernetes/client-node",
      "punycode",
      "undici",
    ]) {
      expect(existsSync(join(dir, "node_modules", name)), name).toBe(false);
    }
  });

  it("starts the built sync without a deprecation warning, as Node 22 and later would print for punycode", async () => {
    const help = await runNode(dir, ["--pending-deprecation", "dist/sync.js", "--help"]);

    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
  });

  it("ends the built sync on a garbage KUBECONFIG with one error line naming it, exit 78", async () => {
    const garbage = join(dir, "garbage-kubeconfig");
    await writeFile(garbage, "clusters: [unclosed\n");

    const run = await runNode(dir, ["dist/sync.js"], { CLUSTER_NAME: "built", KUBECONFIG: garbage });

    expect(run.code).toBe(78);
    expect(
      run.stderr
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { level: string; msg: string }),
    ).toEqual([
      expect.objectContaining({
        level: "error",
        msg: expect.stringMatching(new RegExp(`^KUBECONFIG: ${garbage} is not valid YAML \\(`)),
      }),
    ]);
  });

  it("runs `node dist/sync.js --help` with plain node", async () => {
    const help = await runNode(dir, ["dist/sync.js", "--help"]);

    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--from DIR");
    expect(help.stderr).toBe("");
  });

  it("prints with `--version` on both built entries the version, the commit they were built from and Node.js", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    const head = await run("git", ["rev-parse", "HEAD"], { cwd: ROOT }).then(
      (result) => result.stdout.trim(),
      () => "unknown",
    );
    for (const entry of ["dist/sync.js", "dist/router.js"]) {
      const version = await runNode(dir, [entry, "--version"]);

      expect({ entry, code: version.code, stdout: version.stdout }).toEqual({
        entry,
        code: 0,
        stdout: `edgeslice ${manifest.version} (revision ${head}, Node.js ${process.version})\n`,
      });
    }
  });

  it("maps the built sync's stack frames to the TypeScript sources", async () => {
    // Records where the sync writes its usage from: the frames come from the bundle, shown as sync/main.ts.
    const probe =
      "data:text/javascript,const write=process.stdout.write.bind(process.stdout);" +
      "process.stdout.write=(chunk,...rest)=>{process.stderr.write(new Error('probe').stack);return write(chunk,...rest)}";
    const traced = await runNode(dir, ["--import", probe, "dist/sync.js", "--help"]);

    expect(traced.code).toBe(0);
    expect(traced.stderr).toMatch(/at main \(\S*\/sync\/main\.ts:\d+:\d+\)/);
    expect(traced.stderr).not.toContain("sync.bundle.js:");
  });

  it.runIf(canRunAsPod)(
    "runs as uid 65532 on a read-only root filesystem, where no write succeeds",
    async () => {
      const attempt =
        "try{require('fs').writeFileSync('/tmp/edgeslice-write-probe','x')}catch(e){console.log(e.code)}";
      const result = await runNode(dir, ["-e", `${attempt};console.log(process.getuid())`]);

      expect(result.stdout.trim().split("\n")).toEqual(["EROFS", "65532"]);
    },
  );

  it("publishes examples/ to Redis with `node dist/sync.js --from DIR --once`", async () => {
    const published = await runNode(dir, ["dist/sync.js", "--from", examplesDir, "--once"], {
      CLUSTER_NAME: "built",
      REDIS_URL,
      EDGESLICE_PREFIX: prefix,
    });

    expect(published.code, published.stderr).toBe(0);
    expect(published.stderr).toContain('"msg":"published manifests"');
    expect((await redis.hkeys(`${prefix}:{built}:services`)).sort()).toEqual([
      "demo/api",
      "demo/docs",
      "demo/shop-canary",
      "demo/shop-stable",
      "demo/web",
    ]);
    // examples/03-gateway.yaml and 04-ingress.yaml: an HTTPRoute and an Ingress next to the annotations.
    expect((await redis.hkeys(`${prefix}:{built}:routes`)).sort()).toEqual([
      "annotation:demo/api",
      "annotation:demo/web",
      "httproute:demo/shop",
      "ingress:demo/docs#host:docs.localhost",
    ]);
    expect(await redis.exists(`${prefix}:{built}:heartbeat`)).toBe(1);
  });

  it("serves the published examples with `node dist/router.js` end to end, then exits 0 on SIGTERM", async () => {
    const router = startNode(dir, ["dist/router.js"], {
      PORT: "0",
      HOST: "127.0.0.1",
      REDIS_URL,
      EDGESLICE_PREFIX: prefix,
    });
    try {
      await router.waitFor(/"msg":"router listening"/, 15_000);
      // It listens before its first store load (503 no_snapshot until then): wait for the load.
      await router.waitFor(/"msg":"store loaded"/, 15_000);
      const port = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(router.output())?.[1]);

      const web = await get(port, "/", "web.localhost");
      const api = await get(port, "/", "api.localhost");
      const unknown = await get(port, "/", "nothing.localhost");
      const shop = await get(port, "/", "shop.localhost");
      const docs = await get(port, "/guide/intro", "docs.localhost");

      expect(web.status).toBe(200);
      expect(web.body).toContain(`demo/web answered over IPv4 from ${backends?.address(18081)}`);
      expect(api.status).toBe(200);
      expect(api.body).toContain(`demo/api answered over IPv6 from ${backends?.address(18083)}`);
      // The HTTPRoute splits 90/10: either Service may answer this one request.
      expect(shop.body).toMatch(/^demo\/shop-(stable|canary) answered over IPv4 from 127\.0\.0\.1:\d+: /);
      expect(docs.body).toContain(`demo/docs answered over IPv4 from ${backends?.address(18087)}`);
      expect(unknown).toEqual({
        status: 404,
        body: expect.stringMatching(/^\{"error":"no_route","requestId":"[\w-]+"\}$/),
      });
    } finally {
      router.child.kill("SIGTERM");
    }
    const stopped = await router.finished;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain('"msg":"router stopped"');
  });
});

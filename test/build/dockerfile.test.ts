import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildInto, PRODUCTION_INSTALL, ROOT, remove, tempFolder } from "./support/built.js";

/** `npm run build` into a folder of this file's own, read once. */
let outdir = "";
let buildLog = "";
let dockerfile = "";

beforeAll(async () => {
  outdir = await tempFolder("build");
  buildLog = await buildInto(outdir);
  dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
}, 60_000);

afterAll(async () => {
  await remove(outdir);
});

/** The instructions of one stage (`FROM ... AS name` up to the next FROM), continuation lines joined. */
function stage(name: string): string[] {
  const lines = dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
  const start = lines.findIndex((line) => new RegExp(`^FROM \\S+ AS ${name}$`).test(line));
  if (start < 0) throw new Error(`Dockerfile has no stage ${name}`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith("FROM "));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The bundles' TypeScript inputs, from their source maps, as paths from the repository root. */
async function bundledSources(): Promise<string[]> {
  const sources = new Set<string>();
  for (const file of (await readdir(outdir)).filter((name) => name.endsWith(".map"))) {
    const map = JSON.parse(await readFile(join(outdir, file), "utf8")) as { sources: string[] };
    for (const source of map.sources) sources.add(relative(ROOT, resolve(outdir, source)));
  }
  return [...sources].sort();
}

describe("npm run build", () => {
  it("writes a launcher (packages, then source maps on, then the bundle), an ESM bundle and its map per entry", async () => {
    expect((await readdir(outdir)).sort()).toEqual([
      "router.bundle.js",
      "router.bundle.js.map",
      "router.js",
      "sync.bundle.js",
      "sync.bundle.js.map",
      "sync.js",
    ]);
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const name of ["sync", "router"]) {
      const lines = (await readFile(join(outdir, `${name}.js`), "utf8")).trimEnd().split("\n");
      // Packages first, while source maps are off (their own maps stay unread); then ours, mapped.
      expect(lines.slice(-2)).toEqual([
        "process.setSourceMapsEnabled(true);",
        `await import("./${name}.bundle.js");`,
      ]);
      const packages = lines.slice(0, -2).map((line) => /^await import\("([^"]+)"\);$/.exec(line)?.[1]);
      expect(packages.length).toBeGreaterThan(0);
      for (const path of packages) {
        expect(Object.keys(manifest.dependencies)).toContain(path?.match(/^(@[^/]+\/)?[^/]+/)?.[0]);
      }
      const bundle = await readFile(join(outdir, `${name}.bundle.js`), "utf8");
      expect(bundle).toContain(`//# sourceMappingURL=${name}.bundle.js.map`);
      expect(bundle).not.toMatch(/\brequire\(/);
    }
  });

  it("lists as production dependencies exactly the packages the launchers import, nothing built in", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const imported = new Set<string>();
    for (const name of ["sync", "router"]) {
      const launcher = await readFile(join(outdir, `${name}.js`), "utf8");
      for (const [, path] of launcher.matchAll(/^await import\("([^".][^"]*)"\);$/gm)) {
        imported.add(path?.match(/^(@[^/]+\/)?[^/]+/)?.[0] ?? "");
      }
    }

    expect(Object.keys(manifest.dependencies).sort()).toEqual([...imported].sort());
  });

  it("vendors no Node module that Node 22 and later deprecate at run time (punycode)", async () => {
    const sync = await readFile(join(outdir, "sync.bundle.js"), "utf8");

    expect(sync).not.toMatch(/\("(node:)?punycode"\)/);
  });

  it("maps only our own TypeScript, vendors client-node's KubeConfig alone into the sync, and leaves every other package to node_modules", async () => {
    const sources = await bundledSources();

    expect(sources).toContain("sync/main.ts");
    expect(sources).toContain("functions/node/main.ts");
    // package.json for its version (lib/build-info.ts), and otherwise TypeScript of our four folders.
    expect(sources.filter((source) => !/^(lib|store|sync|functions)\/.+\.ts$/.test(source))).toEqual([
      "package.json",
    ]);
    expect(buildLog).toMatch(/external: .*ioredis .*valibot/);
    expect(buildLog).not.toMatch(/external: .*@kubernetes\/client-node/);
    const sync = await readFile(join(outdir, "sync.bundle.js"), "utf8");
    // Minified ahead of the mapped code, and tree-shaken: none of client-node's generated API clients.
    expect(sync.split("\n", 3)[2]).toMatch(/^var __edgesliceKubeVendor=/);
    expect(sync).not.toContain("CoreV1Api");
    expect(await readFile(join(outdir, "router.bundle.js"), "utf8")).not.toContain("__edgesliceKubeVendor");
  });
});

describe("the Dockerfile", () => {
  it("builds and runs on a Node LTS line still supported (22 or 24), which package.json's engines admit", async () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)-[\w-]+$/m.exec(dockerfile);
    const major = Number(image?.[1]);
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    const [minimumMajor, minimumMinor] = (/^>=(\d+)\.(\d+)$/.exec(manifest.engines.node) ?? [])
      .slice(1)
      .map(Number);
    const [runningMajor, runningMinor] = process.versions.node.split(".").map(Number);

    expect([22, 24]).toContain(major);
    expect(minimumMajor).toBeLessThanOrEqual(major);
    // The Node these tests run on is one the engines field admits, so the code runs on both.
    expect((runningMajor ?? 0) * 1000 + (runningMinor ?? 0)).toBeGreaterThanOrEqual(
      (minimumMajor ?? Number.POSITIVE_INFINITY) * 1000 + (minimumMinor ?? 0),
    );
  });

  it("builds with the dev dependencies and `npm run build`, from only the folders the bundles come from", async () => {
    const build = stage("build");
    const copied = build.filter((line) => line.startsWith("COPY ")).map((line) => line.split(" ")[1]);
    const folders = new Set(
      (await bundledSources()).filter((source) => source.includes("/")).map((source) => source.split("/")[0]),
    );
    const ignore = await readFile(join(ROOT, ".dockerignore"), "utf8");

    expect(build).toContain("RUN npm ci --ignore-scripts --no-audit --no-fund");
    expect(build[build.length - 1]).toBe("RUN npm run build");
    expect(copied).toEqual(expect.arrayContaining(["package.json", "tsconfig.json", "scripts/build.mjs"]));
    for (const folder of folders) {
      expect(copied).toContain(folder);
      expect(ignore).toContain(`\n!${folder}/\n`);
    }
  });

  it("labels the image with package.json's version, the revision and the base image, and stamps the revision into the bundles", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    const label = stage("runtime").find((line) => line.startsWith("LABEL ")) ?? "";

    expect(dockerfile).toMatch(new RegExp(`^ARG VERSION=${manifest.version.replace(/\./g, "\\.")}$`, "m"));
    expect(dockerfile).toMatch(/^ARG REVISION=unknown$/m);
    expect(stage("build")).toEqual(
      expect.arrayContaining(["ARG REVISION", `ENV EDGESLICE_REVISION=\${REVISION}`]),
    );
    expect(stage("runtime")).toEqual(
      expect.arrayContaining(["ARG NODE_IMAGE", "ARG VERSION", "ARG REVISION"]),
    );
    expect(label).toContain(`org.opencontainers.image.version="\${VERSION}"`);
    expect(label).toContain(`org.opencontainers.image.revision="\${REVISION}"`);
    expect(label).toContain(`org.opencontainers.image.base.name="\${NODE_IMAGE}"`);
  });

  it("runs what test/build runs: the production install, the built files, node dist/router.js, uid 65532", async () => {
    const runtime = stage("runtime");
    const fromBuild = runtime
      .filter((line) => line.startsWith("COPY --from=build "))
      .flatMap((line) => line.split(" ").slice(2, -1))
      .map((path) => path.replace("/app/dist/", ""));

    expect(runtime).toContain(`RUN npm ${PRODUCTION_INSTALL.join(" ")} && npm cache clean --force`);
    expect(fromBuild.sort()).toEqual((await readdir(outdir)).sort());
    expect(runtime).toContain("USER 65532:65532");
    expect(runtime).toContain("ENTRYPOINT []");
    expect(runtime[runtime.length - 1]).toBe('CMD ["node", "dist/router.js"]');
  });
});

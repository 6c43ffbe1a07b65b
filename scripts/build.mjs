// `npm run build [-- --outdir DIR]`: compiles the two Node entries for production, with plain node (no tsx).
//
//   dist/sync.js    node dist/sync.js [--from DIR] [--once] [--print]   (sync/main.ts)
//   dist/router.js  node dist/router.js                                  (functions/node/main.ts)
//
// Each entry is a small launcher: it imports the bundle's npm packages, turns source maps on, then imports its
// bundle (dist/<name>.bundle.js + .map). Node parses a module's source map only if source maps were enabled
// before the module loaded, so a banner inside the bundle itself would come too late: the launcher is what
// makes stack traces point at the .ts sources without `--enable-source-maps` on every command line. Loading
// the packages first, with source maps still off, keeps Node from reading and caching their own maps. The
// bundle's imports of those packages then find them loaded, in the same order, so nothing is evaluated
// differently.
//
// Our code is bundled; npm packages stay external imports, resolved at run time from the node_modules that
// `npm ci --omit=dev` installs, with one exception: the sync uses nothing of @kubernetes/client-node but
// KubeConfig (kubeconfig and in-cluster loading, auth). That class and what it needs are bundled, minified and
// tree-shaken (client-node's files marked free of side effects, so its generated API models and clients drop
// out) into the top of dist/sync.bundle.js, ahead of the mapped code: about 0.5 MB instead of the ~15 MB of
// modules the package loads, which at 1,000 Services / 20,000 endpoints is the difference between ~160 and
// ~145 MiB RSS and starts the sync sooner. So client-node is a devDependency: nothing of it is loaded from
// node_modules at run time. Its URL parser requires Node's deprecated `punycode` module, which Node 22 and
// later warn about on stderr at every start; the vendored build takes the `punycode` package instead.
// The bundles carry the git commit they are built from (lib/build-info.ts: `--version`, edgeslice_build_info):
// EDGESLICE_REVISION when set (the Dockerfile's REVISION build argument: its context has no .git), else the
// checkout's HEAD, else "unknown".
// The dashboard page's browser script (functions/app/dashboard-ui/) is bundled first, by scripts/dashboard-bundle.mjs.
// The build fails if a bundle imports a package that is not in package.json "dependencies", because a
// production install would not have it, and if "dependencies" lists a package no bundle imports, because a
// production install would carry it for nothing.

import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { writeDashboardModule } from "./dashboard-bundle.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({ options: { outdir: { type: "string", default: join(root, "dist") } } });
const outdir = resolve(values.outdir);

const ENTRIES = {
  sync: "sync/main.ts",
  router: "functions/node/main.ts",
};

const KUBE = "@kubernetes/client-node";
/** The name the vendored KubeConfig lives under at the top of the sync bundle (sync/kube/vendored-client-node.ts). */
const KUBE_VENDOR = "__edgesliceKubeVendor";

const failed = () => {
  // esbuild has printed the errors (logLevel); a stack trace of the build script would add nothing.
  process.exit(1);
};

/** KubeConfig and its dependencies as one minified script (no map: it is not our code). */
async function vendorKubeConfig() {
  const result = await build({
    absWorkingDir: root,
    stdin: {
      contents: `export { KubeConfig } from "${KUBE}/dist/config.js";`,
      resolveDir: root,
      loader: "js",
    },
    bundle: true,
    platform: "node",
    target: "node20",
    format: "iife",
    globalName: KUBE_VENDOR,
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "warning",
    plugins: [clientNodeWithoutSideEffects(), userlandPunycode()],
  }).catch(failed);
  // The vendored CommonJS parts (node-fetch, js-yaml...) call require(), which an ES module lacks.
  return `import { createRequire as __edgesliceRequire } from "node:module";
const require = __edgesliceRequire(import.meta.url);
${result.outputFiles[0].text}`;
}

/**
 * client-node's index and generated code import every API model and client for their side effects, which
 * they do not have: say so, so that what KubeConfig does not reach is left out.
 */
function clientNodeWithoutSideEffects() {
  return {
    name: "client-node-without-side-effects",
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.resolving) return undefined;
        const resolved = await builder.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { resolving: true },
        });
        if (resolved.errors.length > 0 || !resolved.path.includes(`/node_modules/${KUBE}/`)) return undefined;
        return { path: resolved.path, sideEffects: false };
      });
    },
  };
}

/** Node's `punycode` module, deprecated, replaced by the npm package of the same code. */
function userlandPunycode() {
  return {
    name: "userland-punycode",
    setup(builder) {
      builder.onResolve({ filter: /^(node:)?punycode$/ }, () => ({
        path: fileURLToPath(import.meta.resolve("punycode/punycode.js")),
      }));
    },
  };
}

/**
 * Resolves the sync's imports of client-node to sync/kube/vendored-client-node.ts, which reads the vendored
 * KubeConfig from the top of its bundle (a file of ours, so the source map names only our sources).
 */
function vendoredKube() {
  return {
    name: "vendored-kube",
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^${KUBE.replace("/", "\\/")}$`) }, () => ({
        path: join(root, "sync/kube/vendored-client-node.ts"),
      }));
    },
  };
}

/** The commit to stamp into the bundles. */
function revision() {
  if (process.env.EDGESLICE_REVISION) return process.env.EDGESLICE_REVISION;
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "unknown";
  }
}

const common = {
  absWorkingDir: root,
  define: { EDGESLICE_REVISION: JSON.stringify(revision()) },
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: "linked",
  // Stack traces need only file, line and column; the sources are in the repository, not in the image.
  sourcesContent: false,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
};

// The dashboard's browser script is bundled first, so the router bundle carries what its sources say now.
await writeDashboardModule();

// The banner comes before the mapped code; esbuild offsets the source map past it.
const results = [
  await build({
    ...common,
    entryPoints: { "sync.bundle": ENTRIES.sync },
    banner: { js: await vendorKubeConfig() },
    plugins: [vendoredKube()],
  }).catch(failed),
  await build({ ...common, entryPoints: { "router.bundle": ENTRIES.router } }).catch(failed),
];
const outputs = Object.assign({}, ...results.map((result) => result.metafile.outputs));

const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
const builtins = new Set(builtinModules);
const external = new Set();
for (const output of Object.values(outputs)) {
  for (const imported of output.imports) if (imported.external) external.add(imported.path);
}
const isBuiltin = (path) => path.startsWith("node:") || builtins.has(path);
/** `@hono/node-server/utils/response` → `@hono/node-server`. */
const packageOf = (path) =>
  path
    .split("/")
    .slice(0, path.startsWith("@") ? 2 : 1)
    .join("/");
const missing = [...external].filter((path) => !isBuiltin(path) && !dependencies.has(packageOf(path)));
if (missing.length > 0) {
  console.error(
    `the bundles import packages missing from package.json "dependencies": ${missing.join(", ")}`,
  );
  process.exit(1);
}
const imported = new Set([...external].filter((path) => !isBuiltin(path)).map(packageOf));
const unused = [...dependencies].filter((name) => !imported.has(name));
if (unused.length > 0) {
  console.error(
    `package.json "dependencies" lists packages no bundle imports (move them to "devDependencies"): ${unused.join(", ")}`,
  );
  process.exit(1);
}

for (const [name, source] of Object.entries(ENTRIES)) {
  const output = Object.values(outputs).find((candidate) => candidate.entryPoint === source);
  const packages = [
    ...new Set(output.imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => i.path)),
  ];
  const launcher = [
    ...packages.map((path) => `await import(${JSON.stringify(path)});`),
    "process.setSourceMapsEnabled(true);",
    `await import("./${name}.bundle.js");`,
    "",
  ].join("\n");
  await writeFile(join(outdir, `${name}.js`), launcher);
}

const sizes = Object.entries(outputs)
  .filter(([file]) => file.endsWith(".js"))
  .map(([file, output]) => `${file} ${(output.bytes / 1024).toFixed(0)} KiB`);
console.log(
  `built ${sizes.join(", ")} at revision ${JSON.parse(common.define.EDGESLICE_REVISION)}; external: ${[...external].sort().join(" ")}`,
);

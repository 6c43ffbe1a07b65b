// `npm run build [-- --outdir DIR]`: compiles the two Node entries for production, with plain node (no tsx).
//
//   dist/sync.js    node dist/sync.js [--from DIR] [--once] [--print]   (sync/main.ts)
//   dist/router.js  node dist/router.js                                  (functions/node/main.ts)
//
// Each entry is a small launcher: it imports the bundle's npm packages, turns source maps on, then imports its
// bundle (dist/<name>.bundle.js + .map). Node parses a module's source map only if source maps were enabled
// before the module loaded, so a banner inside the bundle itself would come too late: the launcher is what
// makes stack traces point at the .ts sources without `--enable-source-maps` on every command line. Loading
// the packages first, with source maps still off, keeps Node from reading and caching their own maps
// (@kubernetes/client-node ships one per file): about 9 MiB less RSS for the sync. The bundle's imports of
// those packages then find them loaded, in the same order, so nothing is evaluated differently.
//
// Our code is bundled; every npm package stays an external import, resolved at run time from the
// node_modules that `npm ci --omit=dev` installs. The build fails if a bundle imports a package that is not in
// package.json "dependencies", because a production install would not have it.

import { readFile, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({ options: { outdir: { type: "string", default: join(root, "dist") } } });
const outdir = resolve(values.outdir);

const ENTRIES = {
  sync: "sync/main.ts",
  router: "functions/node/main.ts",
};

const result = await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(
    Object.entries(ENTRIES).map(([name, source]) => [`${name}.bundle`, source]),
  ),
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
}).catch(() => {
  // esbuild has printed the errors (logLevel); a stack trace of the build script would add nothing.
  process.exit(1);
});

const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
const builtins = new Set(builtinModules);
const external = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const imported of output.imports) if (imported.external) external.add(imported.path);
}
const isBuiltin = (path) => path.startsWith("node:") || builtins.has(path);
const missing = [...external].filter((path) => {
  if (isBuiltin(path)) return false;
  const parts = path.split("/");
  const name = path.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  return !dependencies.has(name);
});
if (missing.length > 0) {
  console.error(
    `the bundles import packages missing from package.json "dependencies": ${missing.join(", ")}`,
  );
  process.exit(1);
}

for (const [name, source] of Object.entries(ENTRIES)) {
  const output = Object.values(result.metafile.outputs).find((candidate) => candidate.entryPoint === source);
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

const sizes = Object.entries(result.metafile.outputs)
  .filter(([file]) => file.endsWith(".js"))
  .map(([file, output]) => `${file} ${(output.bytes / 1024).toFixed(0)} KiB`);
console.log(`built ${sizes.join(", ")}; external: ${[...external].sort().join(" ")}`);

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RouterEnvSchema } from "../../functions/core/config.js";
import { SyncEnvSchema } from "../../sync/config.js";
import { type Deployment, envOf, ofKind, ROOT, render } from "./support/render.js";

const README = readFileSync(join(ROOT, "deploy/README.md"), "utf8");

/** The text of the `## <title>` section, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`deploy/README.md has no section "${title}"`);
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The variables named in the first column of a section's table, e.g. `SYNC_PORT` / `SYNC_HOST`. */
function tableVariables(title: string): string[] {
  return section(title)
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) =>
      [...(line.split("|")[1] ?? "").matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? ""),
    )
    .sort();
}

let syncSets: string[] = [];
let routerSets: string[] = [];

beforeAll(async () => {
  const setBy = async (folder: string) =>
    ofKind<Deployment>(await render(folder), "Deployment").flatMap((d) => [...envOf(d).keys()]);
  syncSets = [...(await setBy("deploy/overlays/east")), ...(await setBy("deploy/sync"))];
  routerSets = [...(await setBy("deploy/overlays/east-router")), ...(await setBy("deploy/router"))];
});

describe("deploy/README.md", () => {
  it("tables exactly the variables the sync reads (sync/config.ts)", () => {
    expect(tableVariables("Sync environment")).toEqual(Object.keys(SyncEnvSchema.entries).sort());
  });

  it("tables exactly the variables the router reads (functions/core/config.ts)", () => {
    expect(tableVariables("Router environment (Node)")).toEqual(Object.keys(RouterEnvSchema.entries).sort());
  });

  it("documents every variable the manifests set", () => {
    for (const name of syncSets) expect(tableVariables("Sync environment")).toContain(name);
    for (const name of routerSets) expect(tableVariables("Router environment (Node)")).toContain(name);
  });

  it("names only files and folders that exist", () => {
    const named = [...README.matchAll(/`((?:deploy|functions|store|sync|test)\/[\w./-]*)`/g)].map(
      (m) => m[1],
    );
    const intro = README.slice(0, README.indexOf("\n## "));
    const layout = intro
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) =>
        [...(line.split("|")[1] ?? "").matchAll(/`([\w./-]+)`/g)].map((m) => `deploy/${m[1]}`),
      );

    expect(layout).toContain("deploy/sync/");
    for (const path of [...named, ...layout]) expect(existsSync(join(ROOT, path ?? "")), path).toBe(true);
  });
});

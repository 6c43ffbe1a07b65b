import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RouterEnvSchema } from "../../functions/core/settings/config.js";
import { SyncEnvSchema } from "../../sync/config.js";
import { section } from "../docs/support/pages.js";
import { type Deployment, envOf, ofKind, ROOT, render } from "./support/render.js";

const README = readFileSync(join(ROOT, "deploy/README.md"), "utf8");

/** The variables named in the first column of a docs/configuration.md section's table. */
function tableVariables(title: string): string[] {
  return section("docs/configuration.md", title)
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

describe("deploy/README.md and docs/configuration.md", () => {
  it("documents NODE_OPTIONS, which the router's manifest sets, where it says why", () => {
    expect(routerSets).toContain("NODE_OPTIONS");
    expect(readFileSync(join(ROOT, "docs/operations.md"), "utf8")).toContain("--max-old-space-size=384");
  });

  it("tables exactly the variables the sync reads (sync/config.ts)", () => {
    expect(tableVariables("Sync")).toEqual(Object.keys(SyncEnvSchema.entries).sort());
  });

  it("tables exactly the variables the router reads (functions/core/settings/config.ts)", () => {
    expect(tableVariables("Router")).toEqual(Object.keys(RouterEnvSchema.entries).sort());
  });

  it("documents every variable the manifests set", () => {
    for (const name of syncSets) expect(tableVariables("Sync")).toContain(name);
    // NODE_OPTIONS is Node's own (the V8 heap limit under the memory limit), documented in docs/operations.md.
    for (const name of routerSets.filter((set) => set !== "NODE_OPTIONS")) {
      expect(tableVariables("Router")).toContain(name);
    }
  });

  it("names only files and folders that exist", () => {
    const named = [...README.matchAll(/`((?:deploy|functions|store|sync|test)\/[\w./-]*)`/g)].map(
      (m) => m[1],
    );
    const layout = README.split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) =>
        [...(line.split("|")[1] ?? "").matchAll(/`([\w./-]+)`/g)].map((m) => `deploy/${m[1]}`),
      );

    expect(layout).toContain("deploy/sync/");
    for (const path of [...named, ...layout]) expect(existsSync(join(ROOT, path ?? "")), path).toBe(true);
  });
});

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import {
  documentationPages,
  firstCells,
  headingAnchors,
  linkTargets,
  ROOT,
  readPage,
  section,
} from "./support/pages.js";

const README = readPage("README.md");
const OPERATIONS = "docs/operations.md";

function source(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

let router: NodeRouter | undefined;
beforeAll(async () => {
  const store = new MemoryStore();
  await store.writer("east").heartbeat({ holder: "test", leaseMs: 3_600_000, at: Date.now() });
  router = await startNodeRouter(parseRouterConfig({ PORT: "0" }), {
    source: store,
    host: "127.0.0.1",
    logger: silentLogger,
  });
});
afterAll(() => router?.close());

describe("README.md", () => {
  it("gives npm start's demo ports as the range the examples' EndpointSlices list", () => {
    const ports = new Set<number>();
    for (const file of readdirSync(join(ROOT, "examples"))) {
      for (const document of parseAllDocuments(source(join("examples", file)))) {
        const object = document.toJS() as { kind?: string; ports?: { port?: number }[] } | null;
        if (object?.kind !== "EndpointSlice") continue;
        for (const port of object.ports ?? []) if (port.port !== undefined) ports.add(port.port);
      }
    }
    const range = /EndpointSlices list, (\d+)-(\d+)\)/.exec(README);

    expect([Number(range?.[1]), Number(range?.[2])]).toEqual([Math.min(...ports), Math.max(...ports)]);
    expect(ports.size).toBe(Number(range?.[2]) - Number(range?.[1]) + 1);
  });

  it("keeps to what it is, the two commands and where to go next", () => {
    expect(README).toContain("npm ci && npm start");
    expect(README).toContain("npm test");
    expect(README.split("\n").length).toBeLessThan(100);
    for (const page of documentationPages().filter((path) => path.startsWith("docs/")))
      expect(README, page).toContain(`](${page})`);
  });
});

describe("docs/operations.md", () => {
  it("tables every metric family the router exports", () => {
    const documented = new Set(
      firstCells(section(OPERATIONS, "Observability")).flatMap((cell) =>
        [...cell.matchAll(/edgeslice_[a-z_]+/g)].map((m) => m[0]),
      ),
    );
    const folder = join(ROOT, "functions/core");
    const exported = new Set(
      readdirSync(folder, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".ts"))
        .flatMap((file) =>
          [...source(join("functions/core", file)).matchAll(/"(edgeslice_[a-z_]+)"/g)].map((m) => m[1]),
        ),
    );

    expect(exported.size).toBeGreaterThan(10);
    for (const name of exported) expect(documented, name).toContain(name);
  });

  it("tables every admin endpoint the router registers", () => {
    const documented = firstCells(section(OPERATIONS, "Admin endpoints and status codes")).flatMap((cell) =>
      [...cell.matchAll(/`\/_edgeslice\/([a-z]+)/g)].map((m) => m[1]),
    );
    const registered = [...source("functions/app/admin.ts").matchAll(/`\$\{ADMIN_PREFIX\}\/([a-z]+)`/g)].map(
      (m) => m[1],
    );

    expect(registered).toContain("livez");
    expect([...new Set(documented)].sort()).toEqual([...new Set(registered)].sort());
  });

  it("names every field /_edgeslice/readyz answers", async () => {
    const admin = section(OPERATIONS, "Admin endpoints and status codes");
    const row = firstCells(admin).find((cell) => cell.includes("/_edgeslice/readyz"));
    const line = admin.split("\n").find((text) => text.split("|")[1] === row);
    const health = (await (await fetch(`${router?.url}/_edgeslice/readyz`)).json()) as {
      clusters: Record<string, unknown>[];
    };

    for (const field of Object.keys(health)) expect(line, field).toContain(`"${field}"`);
    for (const field of Object.keys(health.clusters[0] ?? {})) expect(line, field).toContain(`"${field}"`);
    expect(health.clusters).toHaveLength(1);
  });
});

describe("docs/workers.md", () => {
  it("names as the reader of the Workers VPC binding the file that reads it", () => {
    const named = /`(functions\/workers\/[\w-]+\.ts)` reads the\s+binding/.exec(
      readPage("docs/workers.md"),
    )?.[1];

    expect(source(named ?? "no file named")).toContain("env.POD_NETWORK");
  });
});

describe.each(documentationPages())("%s", (page) => {
  const text = readPage(page);

  it("names only source files and folders that exist", () => {
    const named = [
      ...text.matchAll(/`((?:functions|store|sync|lib|scripts|bench|deploy|test)\/[\w./-]*)`/g),
    ].map((m) => m[1] ?? "");

    for (const path of named) expect(existsSync(join(ROOT, path)), path).toBe(true);
  });

  it("links only to pages and headings that exist", () => {
    const relative = linkTargets(text).filter((target) => !/^[a-z]+:/.test(target));
    for (const target of relative) {
      const [file = "", anchor] = target.split("#");
      const linked = file === "" ? page : normalize(join(dirname(page), file));
      expect(existsSync(join(ROOT, linked)), target).toBe(true);
      if (anchor !== undefined) expect([...headingAnchors(readPage(linked))], target).toContain(anchor);
    }
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseRouterConfig } from "../../functions/core/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import { ROOT } from "./support/render.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The text of the `## <title>` section, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The first cells of a section's table rows. */
function firstCells(title: string): string[] {
  return section(title)
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => line.split("|")[1] ?? "");
}

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

  it("tables every metric family the router exports", () => {
    const documented = new Set(
      firstCells("Observability").flatMap((cell) =>
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
    const documented = firstCells("Admin endpoints and status codes").flatMap((cell) =>
      [...cell.matchAll(/`\/_edgeslice\/([a-z]+)/g)].map((m) => m[1]),
    );
    const registered = [...source("functions/app/admin.ts").matchAll(/`\$\{ADMIN_PREFIX\}\/([a-z]+)`/g)].map(
      (m) => m[1],
    );

    expect(registered).toContain("livez");
    expect([...new Set(documented)].sort()).toEqual([...new Set(registered)].sort());
  });

  it("names every field /_edgeslice/healthz answers", async () => {
    const row = firstCells("Admin endpoints and status codes").find((cell) =>
      cell.includes("/_edgeslice/healthz"),
    );
    const line = section("Admin endpoints and status codes")
      .split("\n")
      .find((text) => text.split("|")[1] === row);
    const health = (await (await fetch(`${router?.url}/_edgeslice/healthz`)).json()) as {
      clusters: Record<string, unknown>[];
    };

    for (const field of Object.keys(health)) expect(line, field).toContain(`"${field}"`);
    for (const field of Object.keys(health.clusters[0] ?? {})) expect(line, field).toContain(`"${field}"`);
    expect(health.clusters).toHaveLength(1);
  });

  it("names as the reader of the Workers VPC binding the file that reads it", () => {
    const named = /`(functions\/workers\/[\w-]+\.ts)` reads the\s+binding/.exec(README)?.[1];

    expect(source(named ?? "no file named")).toContain("env.POD_NETWORK");
  });

  it("names only source files and folders that exist", () => {
    const named = [...README.matchAll(/`((?:functions|store|sync|lib|scripts|bench)\/[\w./-]*)`/g)].map(
      (m) => m[1],
    );

    expect(named.length).toBeGreaterThan(10);
    for (const path of named)
      expect(() => readFileSync(join(ROOT, path ?? ""), "utf8"), path).not.toThrow(/ENOENT/);
  });
});

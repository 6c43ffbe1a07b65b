import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layering ARCHITECTURE.md draws, read from the imports themselves: every relative `import` and
 * `export ... from` of the production folders (type-only ones included: a type taken back up a floor is a
 * circle all the same).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const PRODUCTION = ["lib", "store", "functions", "sync"] as const;

/** The floors of functions/, lowest first: a folder imports only from its own floor or the ones below. */
const FUNCTIONS_FLOORS = [
  ["functions/core"],
  ["functions/transports"],
  ["functions/app"],
  ["functions/node", "functions/workers"],
] as const;

const circleKey = (files: readonly string[]) => [...files].sort().join(" <-> ");

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm;

function sourceFiles(folder: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Each production file (relative to the root) and the production files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of PRODUCTION.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const targets: string[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? "";
      if (!specifier.startsWith(".")) continue;
      targets.push(relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, ".ts"));
    }
    graph.set(file, targets);
  }
  return graph;
}

const graph = importGraph();
const under = (file: string, folder: string) => file.startsWith(`${folder}/`);
const floorOf = (file: string) => FUNCTIONS_FLOORS.findIndex((floor) => floor.some((f) => under(file, f)));

/** `from -> to` for each import where `refused(from, to)`. */
function importsWhere(refused: (from: string, to: string) => boolean): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) if (refused(from, to)) found.push(`${from} -> ${to}`);
  }
  return found.sort();
}

/** Every import circle, each once, as the files around it. */
function circles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") found.push(path.slice(path.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

describe("the import structure ARCHITECTURE.md draws", () => {
  it("reads the production folders' imports", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.values()].flat().length).toBeGreaterThan(graph.size);
  });

  it("has no import circle in production code", () => {
    expect(circles().map(circleKey)).toEqual([]);
  });

  it("keeps lib/ free of anything of ours (package.json's version, data, is read by lib/build-info.ts)", () => {
    expect(
      importsWhere((from, to) => under(from, "lib") && !under(to, "lib") && to !== "package.json"),
    ).toEqual([]);
  });

  it("keeps store/ below the sync and the routers", () => {
    expect(
      importsWhere((from, to) => under(from, "store") && (under(to, "functions") || under(to, "sync"))),
    ).toEqual([]);
  });

  it("keeps functions/ and sync/ apart: neither imports the other", () => {
    expect(
      importsWhere(
        (from, to) =>
          (under(from, "functions") && under(to, "sync")) || (under(from, "sync") && under(to, "functions")),
      ),
    ).toEqual([]);
  });

  it("never imports up a floor of functions/ (core, transports, app, then the runtimes)", () => {
    expect(
      importsWhere((from, to) => {
        const fromFloor = floorOf(from);
        const toFloor = floorOf(to);
        return fromFloor >= 0 && toFloor >= 0 && toFloor > fromFloor;
      }),
    ).toEqual([]);
  });

  it("keeps the two runtimes apart: functions/node/ and functions/workers/ never import each other", () => {
    expect(
      importsWhere(
        (from, to) =>
          (under(from, "functions/node") && under(to, "functions/workers")) ||
          (under(from, "functions/workers") && under(to, "functions/node")),
      ),
    ).toEqual([]);
  });

  it("keeps sync/translate/ pure of the sync's runtime folders (kube/, publish/)", () => {
    expect(
      importsWhere(
        (from, to) => under(from, "sync/translate") && (under(to, "sync/kube") || under(to, "sync/publish")),
      ),
    ).toEqual([]);
  });
});
